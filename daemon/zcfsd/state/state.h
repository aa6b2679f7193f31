/* state.json: what zcfsd must know again after a restart (volumes,
 * targets, servers), written atomically. */
#ifndef ZCFSD_STATE_H
#define ZCFSD_STATE_H

#include "daemon/zcfsd/model/model.h"

int zcfsd_state_save(struct zcfsd *d);
int zcfsd_state_load(struct zcfsd *d);
json_object *zcfsd_volume_json(struct zcfsd *d, const struct zcfsd_volume *v, bool for_state);

#endif
