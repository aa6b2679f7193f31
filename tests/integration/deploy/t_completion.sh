#!/usr/bin/env bash
# `make install` (deploy/install.sh) into a DESTDIR puts zcfsctl's bash
# completion in share/bash-completion/completions, and it completes:
# commands, volume subcommands, create's options, --transport values, and
# volume ids from a real zcfsd (issue 27). About 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require
top=$(cd "$(dirname "$0")/../../.." && pwd)
zcfsd_env 64M true
make -s -C "$top" install DESTDIR="$W/root" PREFIX=/usr BIN="$ZCFS_BIN" >"$W/install.log" 2>&1
C=$W/root/usr/share/bash-completion/completions/zcfsctl
check "make install put the completion at share/bash-completion/completions/zcfsctl" test -f "$C"
zcfsd_start
ctlq volume create vol-a && ctlq volume create vol-b || fail "volumes"
# complete WORDS...: what bash would offer for the last word (zcfsctl on
# PATH talks to this test's zcfsd through ZCFS_SOCKET)
complete_words() {
	PATH=$ZCFS_BIN:$PATH bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		_zcfsctl; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$C" "$@"
}
check "zcfsctl <TAB>: the commands ($(complete_words zcfsctl ''))" \
	test "$(complete_words zcfsctl '')" = "--help --socket --version call kernel policy raw status tenant upgrade volume "
check "zcfsctl vol<TAB>: volume" test "$(complete_words zcfsctl vol)" = "volume "
check "zcfsctl volume <TAB>: its subcommands" \
	test "$(complete_words zcfsctl volume '')" = "create delete get list publish resize restart unpublish "
check "zcfsctl volume create x --tr<TAB>" test "$(complete_words zcfsctl volume create x --tr)" = "--transport "
check "--transport <TAB>" test "$(complete_words zcfsctl volume create x --transport '')" = "auto devfuse uring "
check "zcfsctl volume publish <TAB>: the volume ids ($(complete_words zcfsctl volume publish ''))" \
	test "$(complete_words zcfsctl volume publish '')" = "vol-a vol-b "
check "zcfsctl --socket S policy <TAB>" test "$(complete_words zcfsctl --socket "$SOCK" policy '')" = "check reload "
finish
