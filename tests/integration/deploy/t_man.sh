#!/usr/bin/env bash
# The man pages (docs/man/*.scd, rendered by scdoc as `make man` does):
# each renders with `man --warnings` without a warning (MANWIDTH=80);
# every option a program's --help names is in its page (zcfsd, zcfs-serve,
# zcfsctl, zcfs-csi), every field policy/README.md's tables name is in
# zcfs-policy(5); deploy/install.sh puts them in PREFIX/share/man/man5 and
# man8, where `man -M` finds them. About 5 s.
. "$(dirname "$0")/../../lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
require_cmd scdoc
require_cmd man
require_cmd groff
top=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(make_tmpdir)
mkdir -p "$W/man"

for src in "$top"/docs/man/*.scd; do
	page=$(basename "$src" .scd)
	check "$page: scdoc renders it" bash -c "scdoc <'$src' >'$W/man/$page'"
	check "$page: man --warnings renders it without a warning" \
		bash -c "MANWIDTH=80 man --warnings -l '$W/man/$page' 2>'$W/$page.warn' >/dev/null && [ ! -s '$W/$page.warn' ]" ||
		sed 's/^/# /' "$W/$page.warn"
	# the text on long lines, unhyphenated: an option is one word
	MANWIDTH=1000 man --nh --nj -l "$W/man/$page" 2>/dev/null >"$W/$page.txt"
done

# in_page PAGE WORD: WORD stands alone in PAGE's text (--socket is not --socket-group)
in_page() { grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|$)" "$W/$1.txt"; }
# the options PROG --help names: --long ones and single-letter ones (-o, -h)
help_options() {
	"$ZCFS_BIN/$1" --help 2>&1 | grep -oE -- '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' |
		sed -E 's/^[^-]*//' | grep -E -- '^--[a-z]|^-[A-Za-z]$' | sort -u
}
for prog in zcfsd:zcfsd.8 zcfs-serve:zcfs-serve.8 zcfsctl:zcfsctl.8 zcfs-csi:zcfs-csi.8; do
	p=${prog%%:*} page=${prog#*:}
	[ -x "$ZCFS_BIN/$p" ] || { check "$p built" false; continue; }
	opts=$(help_options "$p")
	missing=$(for o in $opts; do in_page "$page" "$o" || printf '%s ' "$o"; done)
	log "$p --help names $(echo "$opts" | wc -l) options"
	check "$page has every option of $p --help${missing:+ (missing: $missing)}" test -z "$missing"
done

# zcfs-policy(5): every field in the first column of policy/README.md's tables
fields=$(grep -E '^\| `' "$top/policy/README.md" | cut -d'|' -f2 | grep -oE '`[a-z_]+`' | tr -d '`' | sort -u)
missing=$(for f in $fields; do in_page zcfs-policy.5 "$f" || printf '%s ' "$f"; done)
check "zcfs-policy.5 has every field of policy/README.md ($(echo "$fields" | wc -l))${missing:+ (missing: $missing)}" test -z "$missing"

DESTDIR="$W/root" "$top/deploy/install.sh" --prefix /usr --from "$ZCFS_BIN" --man "$W/man" --no-systemd >"$W/install.log" 2>&1
check "install.sh --man: ran" test $? -eq 0
for src in "$top"/docs/man/*.scd; do
	page=$(basename "$src" .scd)
	check "installed: /usr/share/man/man${page##*.}/$page" test -f "$W/root/usr/share/man/man${page##*.}/$page"
done
check "man -M finds zcfsd(8) and zcfs-policy(5) there" bash -c \
	"MANWIDTH=80 man -M '$W/root/usr/share/man' 8 zcfsd | grep -q 'zcfs node daemon' &&
	 MANWIDTH=80 man -M '$W/root/usr/share/man' 5 zcfs-policy | grep -q 'node policy of zcfsd'"
finish
