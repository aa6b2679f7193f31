/* The one list of CSI methods zcfs-csi serves: service, method name, the
 * protobuf-c message prefix of its request and response, the handler
 * (csi_methods.c) and whether the gRPC front may answer it on its queue
 * thread (cheap, no zcfsd call). csi_methods.c expands it into the JSON
 * front's name -> handler table, grpc_dispatch.c into the gRPC paths and
 * message descriptors, so a method added here exists in both. */
#ifndef ZCFS_CSI_METHOD_LIST_H
#define ZCFS_CSI_METHOD_LIST_H

/* X(service, Method, message_prefix, handler, inline_ok) */
#define CSI_METHODS(X) \
	X(Identity, GetPluginInfo, get_plugin_info, m_plugin_info, true) \
	X(Identity, GetPluginCapabilities, get_plugin_capabilities, m_plugin_caps, true) \
	X(Identity, Probe, probe, m_probe, false) \
	X(Controller, CreateVolume, create_volume, csi_create_volume, false) \
	X(Controller, DeleteVolume, delete_volume, csi_delete_volume, false) \
	X(Controller, ValidateVolumeCapabilities, validate_volume_capabilities, csi_validate_volume, false) \
	X(Controller, ListVolumes, list_volumes, csi_list_volumes, false) \
	X(Controller, GetCapacity, get_capacity, csi_get_capacity, false) \
	X(Controller, ControllerGetCapabilities, controller_get_capabilities, m_controller_caps, true) \
	X(Controller, ControllerExpandVolume, controller_expand_volume, csi_controller_expand, false) \
	X(Node, NodeGetInfo, node_get_info, m_node_info, false) \
	X(Node, NodeGetCapabilities, node_get_capabilities, m_node_caps, true) \
	X(Node, NodePublishVolume, node_publish_volume, m_publish, false) \
	X(Node, NodeUnpublishVolume, node_unpublish_volume, m_unpublish, false) \
	X(Node, NodeGetVolumeStats, node_get_volume_stats, m_stats, false) \
	X(Node, NodeStageVolume, node_stage_volume, m_unimplemented, true) \
	X(Node, NodeUnstageVolume, node_unstage_volume, m_unimplemented, true) \
	X(Node, NodeExpandVolume, node_expand_volume, csi_node_expand, false)

#endif
