#!/usr/bin/env python3
"""docs/architecture.md draws the tree as it is: every source file of
common/, daemon/, plugin/ and kernel/ is named there (a header is covered by its
.c of the same name), and every file name it mentions exists."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
DOC = 'docs/architecture.md'
NAME = re.compile(r'(?<![\w.-])([\w/.-]*[\w-]+\.(?:c|h))\b')


def main():
    with open(os.path.join(ROOT, DOC), encoding='utf-8') as f:
        doc = f.read()
    files = subprocess.check_output(['git', 'ls-files', 'common/*.[ch]', 'daemon/*.[ch]', 'plugin/*.[ch]', 'kernel/*.h'],
                                    cwd=ROOT, text=True).split()
    every = subprocess.check_output(['git', 'ls-files'], cwd=ROOT, text=True).split()
    named = set(NAME.findall(doc))
    named_base = {os.path.basename(n) for n in named}
    # "session.h/.c" names both
    named_base |= {m + '.c' for m in re.findall(r'([\w-]+)\.h/\.c', doc)}
    bad = 0
    for f in files:
        base = os.path.basename(f)
        if base in named_base or f in named:
            continue
        if base.endswith('.h') and f[:-2] + '.c' in files and base[:-2] + '.c' in named_base:
            continue
        print('%s: %s is not named' % (DOC, f))
        bad += 1
    for n in sorted(named):
        if not any(e == n or e.endswith('/' + n) for e in every) and not n.startswith('build/'):
            print('%s: names %s, which does not exist' % (DOC, n))
            bad += 1
    if bad:
        sys.exit(1)
    print('%s: names every source file, and only files that exist' % DOC)


if __name__ == '__main__':
    main()
