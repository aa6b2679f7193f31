#!/usr/bin/env bash
# deploy/: the Kubernetes manifests parse (python3-yaml) and agree with the
# build: every binary they run exists, every flag they pass is in that
# binary's --help, every absolute path they use lies in a mounted volume,
# the policy ConfigMap passes `zcfsctl policy check`, the DaemonSet is
# OnDelete; deploy/Containerfile builds the image the manifests name (the
# tag in its build line, README.md's and docs/orchestrators.md's agree
# with every zcfs `image:`, its version is zcfs-csi's, its install.sh run
# puts the binaries where the manifests run them, every library the
# binaries need is installed; no image is built here); the systemd units,
# the Podman and Docker plugin declarations point at installed binaries
# and the plugin's socket; the units are Type=notify, zcfsd's Restart=always
# with OOMScoreAdjust=-900 and modprobe fuse, and `systemd-analyze
# security --offline` scores zcfsd <= 6.5 and the plugin <= 2.0, every
# item it flags explained in the unit (t_systemd.sh runs them); deploy/install.sh installs into a DESTDIR root
# (idempotent, keeps an existing policy) and the installed FlexVolume
# driver answers `init`.
. "$(dirname "$0")/../../lib.sh"
require_cmd jq
top=$(cd "$(dirname "$0")/../../.." && pwd)
D=$top/deploy
for p in zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-flexvolume zcfs-volume-plugin; do
	[ -x "$ZCFS_BIN/$p" ] || fail "$ZCFS_BIN/$p not built"
done
W=$(make_tmpdir)

jqe() { jq -e "$@" >/dev/null; }
# flags_ok BINARY FLAG...: each --flag appears in BINARY --help
flags_ok() {
	local bin=$1 f help; shift
	help=$("$ZCFS_BIN/$bin" --help 2>&1)
	for f in "$@"; do
		grep -qE -- "(^|[[ ,])${f}([] =,]|$)" <<<"$help" || { echo "# $bin has no $f"; return 1; }
	done
}

log "the image: deploy/Containerfile"
CF=$D/Containerfile
check "deploy/Containerfile exists" test -f "$CF"
# the image its build line makes: podman build -f deploy/Containerfile -t IMAGE .
build_tag() { sed -n 's|.*podman build -f deploy/Containerfile -t \([^ `]*\) \..*|\1|p' "$1" | sort -u; }
image=$(build_tag "$CF")
check "Containerfile names one image in its build line ($image)" test -n "$image" -a "$(wc -l <<<"$image")" = 1
check "README.md builds the same image" test "$(build_tag "$top/README.md")" = "$image"
check "docs/orchestrators.md builds the same image" test "$(build_tag "$top/docs/orchestrators.md")" = "$image"
version=$("$ZCFS_BIN/zcfs-csi" --version | awk '{print $2}')
check "the tag is zcfs-csi's version ($version)" test "${image##*:}" = "$version"
check "the image label says the same version" grep -q "org.opencontainers.image.version=\"$version\"" "$CF"
check "Debian 12 base" grep -qE '^FROM [^ ]*debian:12(-slim)?$' "$CF"
# every zcfs image: line of the manifests (the examples' busybox is the
# user's workload, not ours)
mapfile -t images < <(grep -h '^[[:space:]-]*image:' "$D"/kubernetes/*.yaml | sed 's/.*image:[[:space:]]*//; s/["'\'']//g' | grep -v -e '^busybox:' -e '^registry.k8s.io/sig-storage/' | sort -u)
check "the manifests name images" test "${#images[@]}" -gt 0
for i in "${images[@]}"; do
	check "manifest image $i is the one the Containerfile builds" test "$i" = "$image"
done
while read -r src; do
	check "COPY source $src exists in the tree" test -e "$top/$src"
done < <(sed -n 's/^COPY \([^ ]*\) .*/\1/p' "$CF")
run=$(sed -n 's/^RUN \/tmp\/zcfs\/deploy\/install.sh \(.*\) &&.*/\1/p' "$CF")
check "the image runs install.sh --prefix /usr/local --no-systemd --no-docker-plugin" bash -c \
	"grep -q -- '--prefix /usr/local' <<<'$run' && grep -q -- '--no-systemd' <<<'$run' && grep -q -- '--no-docker-plugin' <<<'$run'"
# what that RUN installs, staged here with the same options
check "install.sh as the Containerfile runs it (into a DESTDIR)" env DESTDIR="$W/image" \
	"$D/install.sh" --prefix /usr/local --from "$ZCFS_BIN" --no-systemd --no-docker-plugin >/dev/null
check "... no Docker managed plugin in the image" test ! -e "$W/image/usr/local/lib/zcfs/docker-plugin"
while read -r p; do
	check "image has $p (the manifests run it)" test -x "$W/image$p"
done < <(grep -ho '/usr/local/bin/[a-z-]*' "$D"/kubernetes/*.yaml | sort -u)
if command -v dpkg >/dev/null && command -v readelf >/dev/null; then
	pkgs=$(sed -n '/apt-get.* install/,/rm -rf/p' "$CF" | tr -s ' \\&' '\n' | grep -E '^lib[a-z0-9.+-]+$' | sort -u)
	for b in zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-volume-plugin; do
		for so in $(readelf -d "$ZCFS_BIN/$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
			case $so in libc.so.*|ld-linux*|libasan*|libubsan*|libm.so.*|libgcc_s*|libstdc++*) continue;; esac
			pkg=$(dpkg -S "*/$so" 2>/dev/null | head -n 1 | cut -d: -f1)
			check "$b needs $so: its package ${pkg:-?} is installed in the image" grep -qx "${pkg:-none}" <<<"$pkgs"
		done
	done
else
	log "dpkg or readelf missing: the image's library list is not checked"
fi

log "Kubernetes manifests"
PY=
for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null && "$py" -c 'import yaml' 2>/dev/null; then PY=$py; break; fi
done
if [ -z "$PY" ]; then
	log "python3-yaml not installed: manifest checks not run"
else
	# One JSON line per container: {file, kind, name, argv, env, mounts, volumes}
	"$PY" - "$D"/kubernetes/*.yaml >"$W/containers.jsonl" 2>"$W/yaml.err" <<-'PYEOF'
	import json, sys, yaml
	for path in sys.argv[1:]:
	    with open(path) as f:
	        docs = [d for d in yaml.safe_load_all(f) if d]
	    if not docs:
	        sys.exit(f"{path}: no documents")
	    for d in docs:
	        # a Kustomization has no metadata (kubectl 1.20's kustomize refuses it)
	        for k in ("apiVersion", "kind") + (("metadata",) if d.get("kind") != "Kustomization" else ()):
	            if k not in d:
	                sys.exit(f"{path}: document without {k}")
	        if d["kind"] == "ConfigMap":
	            for name, text in d.get("data", {}).items():
	                print(json.dumps({"file": path, "kind": "ConfigMap", "name": name, "data": text}))
	        spec = d.get("spec", {})
	        pod = spec.get("template", {}).get("spec") if "template" in spec else (spec if d["kind"] == "Pod" else None)
	        if not pod:
	            continue
	        vols = {v["name"]: v for v in pod.get("volumes", [])}
	        for c in pod.get("initContainers", []) + pod.get("containers", []):
	            argv = list(c.get("command", [])) + list(c.get("args", []))
	            probes = [c[p]["exec"]["command"] for p in ("livenessProbe", "readinessProbe", "startupProbe")
	                      if p in c and "exec" in c[p]]
	            mounts = []
	            for m in c.get("volumeMounts", []):
	                if m["name"] not in vols:
	                    sys.exit(f"{path}: {c['name']} mounts undefined volume {m['name']}")
	                mounts.append({"path": m["mountPath"], "prop": m.get("mountPropagation", ""),
	                               "volume": vols[m["name"]]})
	            http = {p: c[p]["httpGet"] for p in ("livenessProbe", "readinessProbe", "startupProbe")
	                    if p in c and "httpGet" in c[p]}
	            ports = {pt.get("name", ""): pt["containerPort"] for pt in c.get("ports", [])}
	            print(json.dumps({"file": path, "kind": d["kind"], "name": c["name"], "argv": argv,
	                              "probes": probes, "http": http, "ports": ports, "mounts": mounts, "image": c.get("image", ""),
	                              "update": spec.get("updateStrategy", {}).get("type", ""),
	                              "hostPID": pod.get("hostPID", False),
	                              "privileged": c.get("securityContext", {}).get("privileged", False)}))
	PYEOF
	rc=$?
	check "every manifest parses as YAML with apiVersion/kind/metadata" test $rc -eq 0
	[ $rc -eq 0 ] || cat "$W/yaml.err"
	zcfsd_c=$(jq -c 'select(.name == "zcfsd")' "$W/containers.jsonl")
	check "the DaemonSet runs zcfsd" test -n "$zcfsd_c"
	# every argv/probe whose program is one of ours: binary exists, flags known
	while read -r argv; do
		prog=$(jq -r '.[0]' <<<"$argv")
		base=$(basename -- "$prog")
		case $base in zcfsd|zcfs-csi|zcfs-volume-plugin|zcfsctl|zcfs-serve) ;; *) continue;; esac
		check "$base is built" test -x "$ZCFS_BIN/$base"
		check "$prog lives in /usr/local/bin (where install.sh --prefix /usr/local puts it)" \
			test "$prog" = "/usr/local/bin/$base"
		mapfile -t flags < <(jq -r '.[1:][] | select(startswith("--")) | sub("=.*"; "")' <<<"$argv")
		check "$base flags (${flags[*]}) exist in --help" flags_ok "$base" "${flags[@]}"
		# every absolute path argument is either one of our binaries or in a mounted volume
		while read -r p; do
			[[ $p == /usr/local/bin/* ]] && { check "$p is built" test -x "$ZCFS_BIN/$(basename "$p")"; continue; }
			[ "$base" = zcfs-csi ] && [ -n "$(jq -r 'select(.name == "csi-plugin")' "$W/containers.jsonl")" ] &&
				jq -e --arg p "$p" 'select(.name == "csi-plugin") | .argv | index($p) != null' "$W/containers.jsonl" 2>/dev/null | grep -q true &&
				continue	# the CSI plugin's own paths: checked below against its mounts
			check "$base: $p lies in a volume mounted into the container" \
				jqe --arg p "$p" 'any(.mounts[]; .path as $m | ($p == $m) or ($p | startswith($m + "/")))' <<<"$zcfsd_c"
		done < <(jq -r '.[1:][] | select(startswith("/"))' <<<"$argv")
	done < <(jq -c '(.argv // empty), (.probes // [])[]' "$W/containers.jsonl" | grep -v '^\[\]$')
	# (the argv loop above checks paths against zcfsd's mounts; the CSI
	# plugin's own are checked here)
	csi_c=$(jq -c 'select(.name == "csi-plugin")' "$W/containers.jsonl")
	check "the DaemonSet runs the CSI node plugin (zcfs-csi serve)" jqe '.argv | index("serve")' <<<"$csi_c"
	while read -r p; do
		check "csi-plugin: $p lies in a volume mounted into it" \
			jqe --arg p "$p" 'any(.mounts[]; .path as $m | ($p == $m) or ($p | startswith($m + "/")))' <<<"$csi_c"
	done < <(jq -r '.argv as $a | [range(1; $a | length)] | map(select($a[. - 1] != "--kubelet-registration-path") | $a[.])[]
		| sub("^unix://"; "") | select(startswith("/"))' <<<"$csi_c")
	ep=$(jq -r '.argv as $a | $a[($a | index("--endpoint")) + 1]' <<<"$csi_c")
	kep=$(jq -r '.argv as $a | $a[($a | index("--kubelet-registration-path")) + 1]' <<<"$csi_c")
	check "the CSI endpoint ($ep) is in the plugin directory kubelet sees as $kep" \
		jqe --arg ep "${ep#unix://}" --arg kep "$kep" 'any(.mounts[]; .path as $m | .volume.hostPath.path != null and
			($ep | startswith($m + "/")) and ($kep == .volume.hostPath.path + ($ep | ltrimstr($m))))' <<<"$csi_c"
	check "plugin directory is /var/lib/kubelet/plugins/csi.zcfs.io" test "$(dirname "$kep")" = /var/lib/kubelet/plugins/csi.zcfs.io
	check "registration socket in kubelet's plugins_registry, named after the driver" \
		jqe '.argv as $a | $a[($a | index("--registration-socket")) + 1] as $r | any(.mounts[];
			.volume.hostPath.path == "/var/lib/kubelet/plugins_registry" and $r == .path + "/csi.zcfs.io-reg.sock")' <<<"$csi_c"
	check "the CSI plugin is not privileged (zcfsd makes the mounts)" jqe '.privileged == false' <<<"$csi_c"
	# the probes on the metrics listeners (--metrics, metrics.listen)
	cport=$(jq -r '.argv[] | select(startswith("--metrics=")) | sub(".*:"; "")' <<<"$csi_c")
	check "csi-plugin: serve --metrics=0.0.0.0:${cport:-?}, exposed as port csi-metrics" \
		jqe --arg p "$cport" '(.argv | index("--metrics=0.0.0.0:" + $p)) and (.ports["csi-metrics"] | tostring) == $p' <<<"$csi_c"
	check "csi-plugin: readiness GET /readyz on csi-metrics" \
		jqe '.http.readinessProbe.path == "/readyz" and .http.readinessProbe.port == "csi-metrics"' <<<"$csi_c"
	hport=$(jq -r 'select(.name == "liveness-probe") | .argv[] | select(startswith("--health-port=")) | sub(".*="; "")' "$W/containers.jsonl")
	check "csi-plugin: liveness GET /healthz on port healthz, the livenessprobe sidecar's --health-port (${hport:-?}: the CSI Probe over gRPC)" \
		jqe --arg p "$hport" '.http.livenessProbe.path == "/healthz" and .http.livenessProbe.port == "healthz" and (.ports.healthz | tostring) == $p' <<<"$csi_c"
	check "zcfsd: startup and readiness GET /readyz, liveness GET /healthz, on its port metrics" \
		jqe '.http.startupProbe.path == "/readyz" and .http.readinessProbe.path == "/readyz" and .http.livenessProbe.path == "/healthz" and
			([.http[].port] | unique) == ["metrics"]' <<<"$zcfsd_c"
	check "the probes' paths are the listeners' (common/metrics_http.c serves /healthz and /readyz)" \
		bash -c "grep -q '\"/healthz\"' '$top/common/metrics_http.c' && grep -q '\"/readyz\"' '$top/common/metrics_http.c'"
	"$PY" -c 'import json, sys, yaml; print(json.dumps([d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d]))' \
		"$D"/kubernetes/*.yaml >"$W/docs.json"
	ds='.[] | select(.kind == "DaemonSet") | .spec.template'
	check "CSIDriver csi.zcfs.io: attachRequired false, podInfoOnMount true, Persistent+Ephemeral, fsGroupPolicy File" \
		jqe '.[] | select(.kind == "CSIDriver") | .metadata.name == "csi.zcfs.io" and .spec.attachRequired == false and
			.spec.podInfoOnMount == true and (.spec.volumeLifecycleModes | sort) == ["Ephemeral", "Persistent"] and
			.spec.fsGroupPolicy == "File"' "$W/docs.json"
	check "NodeGetCapabilities offers VOLUME_MOUNT_GROUP (what fsGroupPolicy File delegates)" bash -c \
		"printf '{}' | '$ZCFS_BIN/zcfs-csi' NodeGetCapabilities | grep -q VOLUME_MOUNT_GROUP"
	check "DaemonSet tolerates every taint (operator: Exists)" jqe "$ds | any(.spec.tolerations[]; .operator == \"Exists\" and (.key // \"\") == \"\")" "$W/docs.json"
	check "DaemonSet runs as service account zcfs-csi, bound to the sidecars' roles (rbac.yaml)" \
		jqe "($ds | .spec.serviceAccountName == \"zcfs-csi\") and ([.[] | select(.kind == \"ClusterRoleBinding\" or .kind == \"RoleBinding\") |
			.subjects[0].name == \"zcfs-csi\"] | (length == 2) and all)" "$W/docs.json"
	pc=$(jq -r "$ds | .spec.priorityClassName" "$W/docs.json")
	ns=$(jq -r '.[] | select(.kind == "DaemonSet") | .metadata.namespace' "$W/docs.json")
	check "priority class $pc: system-node-critical only in kube-system, else defined here" bash -c \
		"[ '$ns' = kube-system ] || { [ '$pc' != system-node-critical ] && jq -e '.[] | select(.kind == \"PriorityClass\" and .metadata.name == \"$pc\")' '$W/docs.json' >/dev/null; }"
	mport=$(jq -r '.[] | select(.kind == "ConfigMap") | .data[]' "$W/docs.json" | jq -r '.metrics.listen // empty' | sed 's/.*://')
	check "metrics: the policy listens on TCP port ${mport:-?}, the zcfsd container exposes it, pods are annotated" \
		jqe --arg p "$mport" "$ds | (.metadata.annotations[\"prometheus.io/port\"] == \$p) and
			any(.spec.containers[]; .name == \"zcfsd\" and any(.ports[]; (.containerPort | tostring) == \$p))" "$W/docs.json"
	# A TCP scraper sees every tenant: only labelled namespaces may reach the metrics port.
	check "metrics: a NetworkPolicy admits only zcfs.io/metrics-scraper namespaces to zcfsd's pods, on ports ${mport:-?} and ${cport:-?} alone" \
		jqe --arg p "$mport" --arg c "$cport" "[.[] | select(.kind == \"NetworkPolicy\" and .spec.podSelector.matchLabels[\"app.kubernetes.io/name\"] == \"zcfsd\")] |
			length == 1 and (.[0].spec.policyTypes == [\"Ingress\"]) and (.[0].metadata.namespace == \"$ns\") and
			([.[0].spec.ingress[] | (.ports | map(.port | tostring) == [\$p, \$c]) and
				(.from | map(.namespaceSelector.matchLabels[\"zcfs.io/metrics-scraper\"] == \"true\" and (has(\"ipBlock\") | not)) | all)] | all)" "$W/docs.json"
	cp -r "$D/kubernetes" "$W/k8s-alt"
	check "kubelet-dir.sh rewrites the kubelet root in one go" "$W/k8s-alt/kubelet-dir.sh" /var/snap/k8s/kubelet
	check "... leaving no /var/lib/kubelet behind" bash -c "! grep -q /var/lib/kubelet '$W/k8s-alt/daemonset.yaml' '$W/k8s-alt/policy-configmap.yaml'"
	check "... and the registration path follows" grep -q -- '/var/snap/k8s/kubelet/plugins/csi.zcfs.io/csi.sock' "$W/k8s-alt/daemonset.yaml"
	check "zcfsd is privileged" jqe '.privileged == true' <<<"$zcfsd_c"
	check "DaemonSet updateStrategy OnDelete (an upgrade is the operator's kubectl delete pod)" \
		jqe '.kind == "DaemonSet" and .update == "OnDelete"' <<<"$zcfsd_c"
	# the servers outlive the pod: scopes of the host's systemd, found
	# again by pid (t_systemd's pod generations run this)
	check "zcfsd puts its servers in the host's systemd scopes (--server-scopes=systemd, /run/systemd, hostPID)" \
		jqe '.hostPID == true and (.argv | index("--server-scopes=systemd")) and any(.mounts[]; .path == "/run/systemd" and .volume.hostPath.path == "/run/systemd")' <<<"$zcfsd_c"
	check "YAML: zcfsd, csi-plugin and the init container run the built image ($image)" \
		test "$(jq -r 'select(.kind == "DaemonSet" and (.image | startswith("registry.k8s.io/") | not)) | .image' "$W/containers.jsonl" | sort -u)" = "$image"
	check "kubelet dir mounted with Bidirectional propagation" \
		jqe 'any(.mounts[]; .path == "/var/lib/kubelet" and .prop == "Bidirectional" and .volume.hostPath.path == "/var/lib/kubelet")' <<<"$zcfsd_c"
	check "/dev/fuse from the host" jqe 'any(.mounts[]; .path == "/dev/fuse" and .volume.hostPath.type == "CharDevice")' <<<"$zcfsd_c"
	check "/run/zcfs is the host's (the FlexVolume driver runs on the host)" \
		jqe 'any(.mounts[]; .path == "/run/zcfs" and .volume.hostPath.path == "/run/zcfs")' <<<"$zcfsd_c"
	check "the socket zcfsd serves is the one the driver defaults to" bash -c \
		"jq -e '.argv | index(\"/run/zcfs/zcfsd.sock\")' <<<'$zcfsd_c' >/dev/null && $ZCFS_BIN/zcfs-csi --help | grep -q /run/zcfs/zcfsd.sock"
	inst_c=$(jq -c 'select(.name == "install-flexvolume")' "$W/containers.jsonl")
	check "init container installs the FlexVolume driver as zcfs.io~zcfs/zcfs" \
		jqe '(.argv | join(" ") | test("/usr/local/bin/zcfs-flexvolume .*zcfs.io~zcfs/zcfs")) and any(.mounts[]; .volume.hostPath.path == "/usr/libexec/kubernetes/kubelet-plugins/volume/exec")' <<<"$inst_c"
	check "examples use driver zcfs.io/zcfs (FlexVolume) or csi.zcfs.io (CSI)" test "$(grep -h '^ *driver:' "$D"/kubernetes/example-*.yaml | grep -vcE 'driver: (zcfs.io/zcfs|csi.zcfs.io)$')" = 0
	check "a CSI persistent-volume example and an inline ephemeral one" bash -c \
		"grep -lq 'persistentVolumeClaim' '$D'/kubernetes/example-csi-*.yaml && grep -q '^ *csi:' '$D/kubernetes/example-csi-ephemeral.yaml'"
	# the policy shipped in the ConfigMap is valid
	jq -r 'select(.kind == "ConfigMap") | .data' "$W/containers.jsonl" >"$W/cm-policy.json"
	check "ConfigMap policy passes zcfsctl policy check" "$ZCFS_BIN/zcfsctl" policy check "$W/cm-policy.json"
	check "ConfigMap policy allows targets under /var/lib/kubelet/pods" \
		jqe 'all(.tenants[]; any(.allowed_target_prefixes[]; . == "/var/lib/kubelet/pods"))' "$W/cm-policy.json"
fi

log "kustomize: render the install and validate it against the Kubernetes API schemas"
# Every kustomize at hand renders deploy/kubernetes (the base) and its
# overlays: kubectl's own (Debian 12's kubernetes-client is 1.20, whose
# kustomize v2.0.3 refuses fields newer ones take, e.g. labels:), a
# standalone kustomize, and ZCFS_KUBECTL (more kubectl binaries, e.g. an
# extracted kubernetes-client next to a newer one). They must agree.
# npm's kubernetes-models (the API's OpenAPI schemas, ajv) then validates
# every object: types, enums, required fields (not unknown fields).
# Installed once into build/npm-k8s.
renderers=()
for k in $(command -v kubectl) ${ZCFS_KUBECTL:-}; do
	[ -x "$k" ] && renderers+=("$k kustomize")
done
command -v kustomize >/dev/null && renderers+=("$(command -v kustomize) build")
if [ ${#renderers[@]} -eq 0 ]; then
	log "no kubectl or kustomize installed (make deps installs kubernetes-client): the kustomization is not rendered"
else
	n=0
	for r in "${renderers[@]}"; do
		n=$((n + 1))
		ver=$(${r% *} version --client 2>/dev/null | grep -oE 'v[0-9]+\.[0-9]+\.[0-9]+' | head -n 1)
		check "${r% *} ($ver): deploy/kubernetes renders" bash -c "$r '$D/kubernetes' >'$W/rendered-$n.yaml' 2>'$W/render-$n.err'" ||
			sed 's/^/# /' "$W/render-$n.err"
		for o in "$D"/overlays/*/; do
			check "${r% *} ($ver): overlay $(basename "$o") renders" bash -c "$r '$o' >'$W/overlay-$(basename "$o")-$n.yaml' 2>'$W/render-$n.err'" ||
				sed 's/^/# /' "$W/render-$n.err"
		done
	done
	cp "$W/rendered-1.yaml" "$W/rendered.yaml"
	if [ -n "$PY" ] && [ $n -gt 1 ]; then
		for f in "$W"/rendered-*.yaml "$W"/overlay-*-*.yaml; do
			"$PY" -c 'import json, sys, yaml; print(json.dumps(sorted((d for d in yaml.safe_load_all(open(sys.argv[1])) if d),
				key=lambda d: (d["kind"], d["metadata"]["name"])), sort_keys=True))' "$f" >"$f.json"
		done
		for i in $(seq 2 $n); do
			check "${renderers[$((i - 1))]% *} renders the base as ${renderers[0]% *} does" cmp -s "$W/rendered-1.yaml.json" "$W/rendered-$i.yaml.json"
			for o in "$D"/overlays/*/; do
				o=$(basename "$o")
				check "... and overlay $o" cmp -s "$W/overlay-$o-1.yaml.json" "$W/overlay-$o-$i.yaml.json"
			done
		done
	fi
	NPMD=$top/build/npm-k8s
	if [ ! -d "$NPMD/node_modules/kubernetes-models" ] && command -v npm >/dev/null; then
		mkdir -p "$NPMD"
		timeout 300 npm install --prefix "$NPMD" --no-audit --no-fund --silent kubernetes-models@5.1.0 js-yaml@4.1.0 >"$W/npm.log" 2>&1 ||
			{ log "npm install kubernetes-models failed:"; tail -n 5 "$W/npm.log"; }
	fi
	if [ -d "$NPMD/node_modules/kubernetes-models" ] && command -v node >/dev/null; then
		NODE_PATH=$NPMD/node_modules node "$top/tests/integration/helpers/k8s_validate.mjs" <"$W/rendered.yaml" >"$W/validate.out" 2>&1
		vrc=$?
		sed 's/^/# /' "$W/validate.out"
		check "every rendered object validates against the API schemas (kubernetes-models)" test "$vrc" -eq 0
		check "... a broken object does not (a container without a name, a string port)" bash -c \
			"printf 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec: {selector: {matchLabels: {a: b}}, template: {spec: {containers: [{image: x, ports: [{containerPort: abc}]}]}}}\n' |
			NODE_PATH='$NPMD/node_modules' node '$top/tests/integration/helpers/k8s_validate.mjs' >/dev/null; [ \$? -eq 1 ]"
	else
		log "node or npm's kubernetes-models not available: the schema validation is not run"
	fi
	if [ -n "$PY" ]; then
		"$PY" -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))' \
			"$W/rendered.yaml" >"$W/rendered.json"
		R='.[] | select(.kind == "DaemonSet") | .spec.template.spec'
		check "every rendered object is labelled app.kubernetes.io/version=$version" \
			jqe --arg v "$version" 'all(.[]; .metadata.labels["app.kubernetes.io/version"] == $v)' "$W/rendered.json"
		check "rendered: Namespace, CSIDriver, RBAC, ConfigMap, PriorityClass, DaemonSet, NetworkPolicy, StorageClass" \
			test "$(jq -r '[.[].kind] | unique | join(" ")' "$W/rendered.json")" = "CSIDriver ClusterRole ClusterRoleBinding ConfigMap DaemonSet Namespace NetworkPolicy PriorityClass Role RoleBinding ServiceAccount StorageClass"
		sc='.[] | select(.kind == "StorageClass")'
		check "StorageClass: provisioner csi.zcfs.io, WaitForFirstConsumer, allowVolumeExpansion" \
			jqe "$sc | .provisioner == \"csi.zcfs.io\" and .volumeBindingMode == \"WaitForFirstConsumer\" and .allowVolumeExpansion == true" "$W/rendered.json"
		check "StorageClass parameters are ones CreateVolume accepts" bash -c \
			"jq -c '$sc | {name: \"p\", volume_capabilities: [{mount: {}, access_mode: {mode: 1}}], parameters: .parameters}' '$W/rendered.json' |
			'$ZCFS_BIN/zcfs-csi' --socket /nonexistent --state-dir '$W/csi' --node-id n1 CreateVolume 2>/dev/null | grep -q UNAVAILABLE"
		prov='.containers[] | select(.name == "csi-provisioner") | .args'
		check "external-provisioner: --node-deployment, --enable-capacity, --feature-gates=Topology=true, NODE_NAME" \
			jqe "$R | ($prov | index(\"--node-deployment=true\") and index(\"--enable-capacity=true\") and index(\"--feature-gates=Topology=true\"))
				and any(.containers[] | select(.name == \"csi-provisioner\") | .env[]; .name == \"NODE_NAME\")" "$W/rendered.json"
		check "external-resizer and livenessprobe sidecars on the CSI socket" \
			jqe "$R | [.containers[] | select(.name == \"csi-resizer\" or .name == \"liveness-probe\") | .args | index(\"--csi-address=/csi/csi.sock\")] | length == 2 and all" "$W/rendered.json"
		check "the CSI socket is group 2500 (--socket-group), the pod's supplemental group for the sidecars" \
			jqe "$R | (.securityContext.supplementalGroups | index(2500)) and any(.containers[] | select(.name == \"csi-plugin\") | .command[]; . == \"--socket-group=2500\")" "$W/rendered.json"
		check "zcfs-csi serve takes --socket-group" flags_ok zcfs-csi --socket-group
		check "nodeSelector kubernetes.io/os: linux" jqe "$R | .nodeSelector[\"kubernetes.io/os\"] == \"linux\"" "$W/rendered.json"
		check "every container but privileged zcfsd: no privilege escalation, read-only root, all capabilities dropped" \
			jqe "$R | [.containers[] | select(.name != \"zcfsd\") | .securityContext | .allowPrivilegeEscalation == false and
				.readOnlyRootFilesystem == true and (.capabilities.drop | index(\"ALL\"))] | all" "$W/rendered.json"
		check "the sidecars run as non-root" \
			jqe "$R | [.containers[] | select(.image | startswith(\"registry.k8s.io/\")) | .securityContext.runAsNonRoot == true and .securityContext.runAsUser > 0] | length == 3 and all" "$W/rendered.json"
		check "every container has resource requests and a memory limit" \
			jqe "$R | [.containers[] | .resources.requests.cpu and .resources.requests.memory and .resources.limits.memory] | all" "$W/rendered.json"
		check "zcfsd has startup, readiness and liveness probes; csi-plugin liveness and readiness" \
			jqe "$R | (.containers[] | select(.name == \"zcfsd\") | .startupProbe and .readinessProbe and .livenessProbe) and
				(.containers[] | select(.name == \"csi-plugin\") | .livenessProbe and .readinessProbe)" "$W/rendered.json"
		check "sidecar images are pinned to a version" \
			jqe "$R | [.containers[] | select(.image | startswith(\"registry.k8s.io/\")) | .image | test(\":v[0-9]+\\\\.[0-9]+\\\\.[0-9]+$\")] | all" "$W/rendered.json"
	fi
fi

log "make image: the node image, built with Podman"
if [ "${ZCFS_TEST_IMAGE:-1}" = 1 ] && command -v podman >/dev/null; then
	ti=localhost/zcfs-t-deploy:$$
	IMAGE_ROOT=$W/image-root "$top/scripts/make-image.sh" "$ti" >"$W/image.log" 2>&1
	irc=$?
	if [ "$irc" -eq 77 ]; then
		log "$(tail -n 1 "$W/image.log")"
	else
		check "scripts/make-image.sh (make image) builds it" test "$irc" -eq 0
		[ "$irc" -eq 0 ] || tail -n 5 "$W/image.log"
		check "the image holds every binary the manifests run" bash -c \
			"podman image mount >/dev/null 2>&1; m=\$(podman image mount '$ti' 2>/dev/null) && for p in zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-flexvolume; do test -x \"\$m/usr/local/bin/\$p\" || exit 1; done; podman image unmount '$ti' >/dev/null 2>&1; true" 
		check "... and the libraries they load (ldd in the image root)" bash -c \
			"for b in '$W'/image-root/usr/local/bin/*; do chroot '$W/image-root' /usr/local/bin/\$(basename \$b) --version >/dev/null 2>&1 || chroot '$W/image-root' /usr/local/bin/\$(basename \$b) --help >/dev/null 2>&1 || exit 1; done"
		podman rmi -f "$ti" >/dev/null 2>&1
	fi
else
	log "podman not installed (or ZCFS_TEST_IMAGE=0): make image not run"
fi

log "examples name tenants that exist"
tenants=$(jq -r '.tenants[].name' "$top"/policy/examples/*.json | sort -u)
mapfile -t named < <(grep -ohE '(tenant=|--tenant )[A-Za-z0-9._-]+' "$top/README.md" "$top/docs/orchestrators.md" |
	sed 's/^tenant=//; s/^--tenant //' | sort -u)
check "README.md and docs/orchestrators.md name tenants in examples" test "${#named[@]}" -gt 0
for t in "${named[@]}"; do
	check "tenant '$t' of the docs' examples is in policy/examples" grep -qx -- "$t" <<<"$tenants"
done
if [ -f "$W/cm-policy.json" ]; then
	while read -r t; do
		check "tenant '$t' of the example manifests is in the ConfigMap policy" \
			jqe --arg t "$t" 'any(.tenants[]; .name == $t)' "$W/cm-policy.json"
	done < <(sed -n 's/^ *tenant: *//p' "$D"/kubernetes/example-*.yaml | sort -u)
fi

log "install.sh into a DESTDIR root"
R=$W/root
check "install.sh --prefix /opt/zcfs --flexvolume" env DESTDIR="$R" "$D/install.sh" --prefix /opt/zcfs \
	--from "$ZCFS_BIN" --flexvolume >"$W/install.log"
for p in zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-volume-plugin; do
	check "$p installed and runs" bash -c "'$R/opt/zcfs/bin/$p' --help >/dev/null 2>&1"
done
check "policy installed and valid" "$ZCFS_BIN/zcfsctl" policy check "$R/etc/zcfs/policy.d"
check "... zcfsd's metrics on /run/zcfs/metrics.sock (zcfsd.service's RuntimeDirectory)" bash -c \
	"jq -e '.metrics.listen == \"/run/zcfs/metrics.sock\"' '$R/etc/zcfs/policy.d/default.json' >/dev/null &&
	grep -qx 'RuntimeDirectory=zcfs' '$R/etc/systemd/system/zcfsd.service'"
# the Docker managed plugin: installed, not created (install.sh says why)
P=$R/opt/zcfs/lib/zcfs/docker-plugin
check "Docker managed plugin: config.json is deploy/docker/config.json" cmp -s "$P/config.json" "$D/docker/config.json"
check "... its rootfs holds the plugin at config.json's entrypoint" \
	test -x "$P/rootfs$(jq -r '.entrypoint[0]' "$P/config.json")"
if [ "$(id -u)" = 0 ]; then
	check "... which runs in that rootfs alone (chroot: every library it loads is there)" \
		bash -c "chroot '$P/rootfs' /usr/local/bin/zcfs-volume-plugin --help >/dev/null"
fi
check "... and propagatedMount, the socket's directory and the mount points exist in it" bash -c \
	"for d in \$(jq -r '.propagatedMount, (.mounts[].destination)' '$P/config.json') /run/docker/plugins; do test -d '$P/rootfs'\$d || exit 1; done"
check "install.sh prints the docker plugin create command for it" \
	grep -qx "install:   docker plugin create zcfs /opt/zcfs/lib/zcfs/docker-plugin" "$W/install.log"
check "install.sh --no-docker-plugin leaves it out" bash -c \
	"DESTDIR='$W/nodp' '$D/install.sh' --prefix /opt/zcfs --from '$ZCFS_BIN' --no-docker-plugin >/dev/null && test ! -e '$W/nodp/opt/zcfs/lib/zcfs'"
check "every path install.sh reports exists under DESTDIR" bash -c \
	"sed -n 's/^install: \(\/[^ ]*\)$/\1/p' '$W/install.log' | while read -r p; do test -e '$R'\$p || exit 1; done"
for u in zcfsd zcfs-volume-plugin; do
	f=$R/etc/systemd/system/$u.service
	check "$u.service installed" test -f "$f"
	check "$u.service: no template left" bash -c "! grep -qE '@[A-Z]+@' '$f'"
	exe=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$f")
	check "$u.service runs $exe, installed" test -x "$R$exe"
	mapfile -t flags < <(sed -n 's/^ExecStart=//p' "$f" | tr ' ' '\n' | grep -- '^--')
	check "$u.service flags (${flags[*]}) exist in --help" flags_ok "$(basename "$exe")" "${flags[@]}"
	while read -r p; do
		[[ $p == /opt/zcfs/* ]] && check "$u.service: $p installed" test -e "$R$p"
	done < <(sed -n 's/^ExecStart=//p' "$f" | tr ' ' '\n' | grep '^/')
	if command -v systemd-analyze >/dev/null 2>&1; then
		check "$u.service: systemd-analyze verify" bash -c \
			"systemd-analyze verify --root='$R' '$f' 2>&1 | grep -v 'Failed to prepare\|Cannot open\|not found\|No such file\|docker.service\|podman.service\|kubelet.service' | grep -qi 'error\|unknown' && exit 1 || exit 0"
	fi
done
ZU=$R/etc/systemd/system/zcfsd.service
PU=$R/etc/systemd/system/zcfs-volume-plugin.service
check "zcfsd.service: Type=notify (READY=1 after re-adoption and listen)" grep -qx 'Type=notify' "$ZU"
check "zcfs-volume-plugin.service: Type=notify (READY=1 once it listens)" grep -qx 'Type=notify' "$PU"
check "zcfsd.service: Restart=always" grep -qx 'Restart=always' "$ZU"
check "zcfsd.service: OOMScoreAdjust=-900" grep -qx 'OOMScoreAdjust=-900' "$ZU"
check "zcfsd.service: ExecStartPre=-/sbin/modprobe fuse" grep -qx 'ExecStartPre=-/sbin/modprobe fuse' "$ZU"
# servers live in scopes of their own (t_systemd.sh): the unit keeps the
# default KillMode, which systemd does not warn about
check "zcfsd.service: no KillMode= (servers are in their own scopes)" bash -c "! grep -q '^KillMode=' '$ZU'"
check "zcfsd links libsystemd (sd_notify, the servers' scopes)" bash -c "readelf -d '$ZCFS_BIN/zcfsd' | grep -q 'libsystemd.so'"
# systemd-analyze security, offline (no systemd as PID 1 needed, v252+):
# the exposure figure and, for each item it flags, the unit's comment
# names the option and says why it is left out
if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	for u in zcfsd:6.5 zcfs-volume-plugin:2.0; do
		name=${u%%:*} goal=${u#*:} f=$R/etc/systemd/system/${u%%:*}.service
		systemd-analyze security --offline=true "$f" >"$W/$name.security" 2>&1
		score=$(sed -n "s/.*Overall exposure level for $name.service: \([0-9.]*\).*/\1/p" "$W/$name.security")
		log "systemd-analyze security $name.service: ${score:-?} (goal <= $goal)"
		check "$name.service: systemd-analyze security ${score:-?} <= $goal" \
			awk -v s="${score:-99}" -v g="$goal" 'BEGIN { exit !(s <= g) }'
		while read -r opt; do
			base=${opt%%=*}
			check "$name.service: flagged $opt is explained in the unit's comments" \
				grep -qE "^#.*\<${base//\//|}\>" "$f"
		done < <(awk '$1 == "✗" { print $2 }' "$W/$name.security" | sort -u)
	done
else
	log "systemd-analyze has no --offline (systemd < 252): security scores not measured"
fi
sock=$("$ZCFS_BIN/zcfs-volume-plugin" --help | sed -n 's/.*--listen PATH.*(default \(.*\))/\1/p')
check "volume plugin default socket known ($sock)" test -n "$sock"
check "Docker spec points at the plugin's socket" test "$(cat "$R/etc/docker/plugins/zcfs.spec")" = "unix://$sock"
check "Podman drop-in declares the plugin's socket" grep -qx "zcfs = \"$sock\"" "$R/etc/containers/containers.conf.d/zcfs.conf"
check "volume plugin unit listens there" grep -q -- "--listen $sock " "$R/etc/systemd/system/zcfs-volume-plugin.service"
vpm=$(sed -n 's/^ExecStart=.* --metrics \([^ ]*\).*/\1/p' "$PU")
check "volume plugin unit: --metrics on a unix socket ($vpm) in a RuntimeDirectory= of its own" bash -c \
	"case '$vpm' in /run/*/*) ;; *) exit 1;; esac && grep -qE '^RuntimeDirectory=.*( |=)$(basename "$(dirname "$vpm")")( |\$)' '$PU'"
F=$R/usr/libexec/kubernetes/kubelet-plugins/volume/exec/zcfs.io~zcfs/zcfs
check "FlexVolume driver installed" test -x "$F"
check "FlexVolume driver answers init (one JSON object, attach false)" bash -c \
	"'$F' init 2>&1 | jq -e '.status == \"Success\" and .capabilities.attach == false' >/dev/null"
# kubelet runs it on the host, whose libc and json-c may be older or
# missing (RHEL 8, Ubuntu 20.04, AL2, COS, Bottlerocket): no NEEDED
# library, no interpreter. A sanitizer build cannot be static: not checked.
if [ -z "$(readelf -d "$F" 2>/dev/null | grep -E 'libasan|libubsan')" ] && ! ldd "$ZCFS_BIN/zcfs-csi" 2>/dev/null | grep -q libasan; then
	check "FlexVolume driver is statically linked (objdump -p: no NEEDED, no INTERP)" bash -c \
		"objdump -p '$F' | grep -qE '^ *(NEEDED|INTERP)' && exit 1; ! objdump -p '$F' | grep -qE '^ +INTERP'"
	check "FlexVolume driver: ldd finds no shared library" bash -c "ldd '$F' 2>&1 | grep -q 'not a dynamic executable'"
fi
echo '{"tenants": []}' >"$R/etc/zcfs/policy.d/default.json"
check "re-running install.sh works" env DESTDIR="$R" "$D/install.sh" --prefix /opt/zcfs --from "$ZCFS_BIN" >/dev/null
check "... and keeps the operator's policy" grep -qx '{"tenants": \[\]}' "$R/etc/zcfs/policy.d/default.json"
check "install.sh refuses a relative prefix" bash -c "! DESTDIR='$R' '$D/install.sh' --prefix opt >/dev/null 2>&1"
check "install.sh refuses unknown arguments" bash -c "! DESTDIR='$R' '$D/install.sh' --bogus >/dev/null 2>&1"

if command -v podman >/dev/null 2>&1; then
	log "podman reads the drop-in"
	mkdir -p "$W/podman/tmp"
	{ printf '[engine]\ntmp_dir = "%s"\nevents_logger = "none"\n' "$W/podman/tmp"
	  grep -v '^#' "$D/podman/containers.conf"; } >"$W/podman/containers.conf"
	check "podman info lists the zcfs volume plugin" bash -c \
		"CONTAINERS_CONF='$W/podman/containers.conf' podman --root '$W/podman/root' --runroot '$W/podman/run' --storage-driver vfs info --format json 2>/dev/null | jq -e '.plugins.volume | index(\"zcfs\")' >/dev/null"
fi
finish
