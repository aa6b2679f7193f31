#!/usr/bin/env python3
"""No code written twice outside the tests: every pair of places the
`duplicates` tool finds (six or more lines, the same or of the same
shape) with a side outside tests/ is either marked boilerplate by the
tool itself or listed in scripts/duplicates-allow.txt ("fileA ~ fileB",
as the tool prints them, without line numbers) under a comment saying
what boilerplate it is. An entry no longer found fails too, so the list
only shrinks. Without the tool (it is not a Debian package) the check
says so and passes."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allowlist  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
ALLOW = 'scripts/duplicates-allow.txt'
ROW = re.compile(r'^D\d+ (\S+?):\d+-\d+ ~ (\S+?):\d+-\d+(?: (.*))?$')


def allowed():
    return allowlist.read(ROOT, ALLOW, lambda line: tuple(s.strip() for s in line.split('~')))


def main():
    tool = shutil.which('duplicates')
    if not tool:
        print('duplicates: the tool is not installed here, not checked')
        return
    out = subprocess.run([tool, '--most', '200', '--seconds', '60'], cwd=ROOT, text=True,
                         capture_output=True).stdout
    entries, bad = allowed()
    seen, marked = set(), 0
    for line in out.splitlines():
        m = ROW.match(line)
        if not m:
            if line.startswith('incomplete:'):
                print('duplicates: %s (not all of the tree was read)' % line)
            continue
        a, b, rest = m.groups()
        rest = rest or ''
        if a.startswith('tests/') and b.startswith('tests/'):
            continue
        if (a, b) in entries:
            seen.add((a, b))
        elif 'boilerplate' in rest.split():
            marked += 1
        else:
            bad.append('duplicates: %s (not boilerplate, not in %s)' % (line, ALLOW))
    for pair, n in sorted(entries.items(), key=lambda e: e[1]):
        if pair not in seen:
            bad.append('%s:%d: %s ~ %s is no longer a pair: drop the entry' % (ALLOW, n, pair[0], pair[1]))
    for line in bad:
        print(line)
    if bad:
        sys.exit(1)
    print('duplicates: none outside the tests but %d the tool marks boilerplate and %d listed in %s'
          % (marked, len(seen), ALLOW))


if __name__ == '__main__':
    main()
