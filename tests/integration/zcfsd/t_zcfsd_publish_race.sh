#!/usr/bin/env bash
# Publish and unpublish while someone else unmounts and swaps the targets
# (issue 27): a publish that loses such a race answers a code worth a
# retry (UNAVAILABLE: the target or its mount changed meanwhile) or
# FAILED_PRECONDITION (a recorded target unmounted behind zcfsd's back),
# never INTERNAL. Before, 3 of a run's publishes answered INTERNAL ("exited
# before serving (exit status 0)": the server's mount was unmounted as it
# started; "volume w is no longer mounted at ..."). Rounds of 4 calls for
# 15 s beside a loop that lazily unmounts every zcfs mount under the
# targets and now and then renames their parent and makes it again;
# afterwards everything unpublishes. Transport-independent: devfuse only.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require

zcfsd_env 64M true
zcfsd_start
ctlq volume create v --transport devfuse && ctlq volume create w --transport devfuse &&
	ctlq volume publish w "$TGT/w0" || { show_zcfsd_log; fail "setup"; }
mkdir -p "$TGT/x"
(
	end=$((SECONDS + 15)) n=0
	while [ $SECONDS -lt $end ]; do
		n=$((n + 1))
		if [ $((n % 8)) = 0 ]; then
			mv -T "$TGT/x" "$TGT/x.old" 2>/dev/null; mkdir -p "$TGT/x"
			rm -rf --one-file-system "$TGT/x.old" 2>/dev/null
		fi
		for m in $(awk -v w="$TGT/" '$3 == "fuse.zcfs" && index($2, w) == 1 { print $2 }' /proc/self/mounts); do
			umount -l "$m" 2>/dev/null
		done
		sleep 0.0$((RANDOM % 2))
	done
) &
SW=$!
_zcfs_pids+=("$SW")
rounds=0
while kill -0 "$SW" 2>/dev/null; do
	rounds=$((rounds + 1))
	i=$((rounds % 3))
	ctlq volume publish v "$TGT/x/t$i" 2>/dev/null
	ctlq volume publish w "$TGT/x/u$i" 2>/dev/null
	ctlq volume unpublish v "$TGT/x/t$i" 2>/dev/null
	ctlq volume unpublish w "$TGT/x/u$i" 2>/dev/null
	if [ $((rounds % 10)) = 0 ]; then
		ctlq volume unpublish w "$TGT/w0" 2>/dev/null
		ctlq volume publish w "$TGT/w0" 2>/dev/null
	fi
done
wait "$SW" 2>/dev/null
log "$rounds rounds; failed requests by code: $(grep -o 'event=request-failed.*method=volume\.[a-z]* code=[A-Z_]*' "$W/zcfsd.log" |
	sed 's/.*method=//' | sort | uniq -c | tr -s ' \n' ' ')"
internal=$(grep 'event=request-failed.*code=INTERNAL' "$W/zcfsd.log" | sed 's/.*message=//' | sort | uniq -c)
check "no request answered INTERNAL ($internal)" test -z "$internal"
check "zcfsd still answers status" ctlq status
for id in v w; do
	for t in $(vol_field "$id" 'targets[]'); do ctlq volume unpublish "$id" "$t" 2>/dev/null; done
done
check "every target unpublishes afterwards" \
	test "$(ctl status --json | jq '[.volumes[].targets[]?] | length')" = 0
check "no zcfs mount is left under the work dir" \
	bash -c "! awk -v w='$W/' '\$3 == \"fuse.zcfs\" && index(\$2, w) == 1' /proc/self/mounts | grep -q ."
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
