# shellcheck shell=bash
# scale_policy FILE STORE TARGETS UID_BASE PER: the node policy of the scale
# runs (bench/scale.sh, tests/integration/zcfsd/t_scale.sh): tenants t1..t4 with
# uids UID_BASE..UID_BASE+3, at most PER volumes and 8M of memlock each,
# storage in STORE/tN, targets under TARGETS/tN; queue depth 2, 64K writes,
# /dev/fuse unless a volume asks for io_uring.
scale_policy() {
	local file=$1 store=$2 tgt=$3 uid=$4 per=$5 i
	{
		echo '{"admin_group": "0", "defaults": {"queue_depth": 2, "max_write": "64K", "transport": "devfuse"}, "tenants": ['
		for i in 1 2 3 4; do
			[ "$i" -gt 1 ] && echo ','
			echo "{\"name\": \"t$i\", \"uid\": $((uid + i - 1)), \"gid\": $((uid + i - 1)),"
			echo " \"memlock_budget\": \"8M\", \"max_volumes\": $per, \"storage_root\": \"$store/t$i\","
			echo " \"allowed_target_prefixes\": [\"$tgt/t$i\"], \"data_paths\": {\"io_uring\": true}}"
		done
		echo ']}'
	} >"$file"
}
