#!/usr/bin/env python3
"""No function over 80 lines in common/, daemon/, plugin/ and bench/ (tests and generated
code excluded). A function is counted from the line that opens its body
to its closing brace at column 0. An option table may be longer when it
is marked: a line 'lint:long-table' inside the function. Functions listed
in scripts/function-length-debt.txt ("path function", the ones still to
be split) are reported but pass; an entry that is no longer too long
fails, so the list only shrinks. Exits 1 and lists the functions that
are longer."""
import os
import re
import subprocess
import sys

LIMIT = 80
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
HEAD = re.compile(r'^[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;]*$')


def functions(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        lines = f.read().split('\n')
    name, start, marked = None, 0, False
    for i, line in enumerate(lines):
        if name is None:
            m = HEAD.match(line)
            if m and not line.startswith(('typedef', 'struct', 'enum', 'union', 'static const', '#')) \
                    or (m and line.startswith('static const') and '(' in line):
                cand = m.group(1)
                # the body opens at the first '{' at column 0 after the head
                for j in range(i, min(i + 8, len(lines))):
                    if lines[j].startswith('{'):
                        name, start, marked = cand, j, False
                        break
                    if lines[j].rstrip().endswith(';'):
                        break
        elif line.startswith('}'):
            yield name, start + 1, i - start + 1, marked
            name = None
        elif 'lint:long-table' in line:
            marked = True


def main():
    files = subprocess.check_output(['git', 'ls-files', 'common/*.c', 'daemon/*.c', 'plugin/*.c', 'bench/*.c'], cwd=ROOT,
                                    text=True).split()
    debt = set()
    debt_file = os.path.join(ROOT, 'scripts/function-length-debt.txt')
    if os.path.exists(debt_file):
        with open(debt_file, encoding='utf-8') as f:
            debt = {tuple(l.split()[:2]) for l in f if l.strip() and not l.startswith('#')}
    long_ones, known = [], set()
    for path in files:
        for name, line, n, marked in functions(path):
            if n > LIMIT and not marked:
                if (path, name) in debt:
                    known.add((path, name))
                    print('%s:%d: %s() is %d lines (known, to be split)' % (path, line, name, n))
                else:
                    long_ones.append((n, path, line, name))
    for n, path, line, name in sorted(long_ones, reverse=True):
        print('%s:%d: %s() is %d lines (limit %d)' % (path, line, name, n, LIMIT))
    stale = sorted(debt - known)
    for path, name in stale:
        print('scripts/function-length-debt.txt: %s %s is no longer over %d lines: drop the entry'
              % (path, name, LIMIT))
    if long_ones or stale:
        sys.exit(1)
    if known:
        print('function length: %d known long functions left (scripts/function-length-debt.txt)'
              % len(known))
        return
    print('function length: none over %d lines in common/, daemon/, plugin/ and bench/' % LIMIT)


if __name__ == '__main__':
    main()
