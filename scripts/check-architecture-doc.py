#!/usr/bin/env python3
"""docs/architecture.md draws the tree as it is: every source file of
common/, daemon/, plugin/ and kernel/ is named there (a header is covered by its
.c of the same name), and every file name it mentions exists. The
comments of the sources say no less: a file named in a comment of C code
(common/, daemon/, plugin/, tests/, bench/), or by its bare name in a
comment of a shell or Python script, must exist too (paths in the Linux
tree, fs/inode.c, are not ours to check)."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
DOC = 'docs/architecture.md'
NAME = re.compile(r'(?<![\w.-])([\w/.-]*[\w-]+\.(?:c|h))\b')


LINUX_TREE = ('fs/', 'mm/', 'io_uring/', 'include/', 'security/', 'net/', 'lib/', 'drivers/', 'arch/')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
# a file name in a comment; not a member access (req->in.h.unique)
CNAME = re.compile(r'(?<![\w./<>-])([\w/.-]*[\w-]+\.(?:c|h))\b(?!\.\w)')
BARE = re.compile(r'(?<![\w./<>-])([\w-]+\.(?:c|h|sh|py))\b(?![./\w])')


def exists(name, every, bases):
    if '/' not in name:
        return name in bases
    return any(e == name or e.endswith('/' + name) for e in every)


def stale_comments(every):
    """(file, line, name) of each file a comment names that does not exist."""
    bases = {os.path.basename(e) for e in every}
    out = []
    for f in every:
        if f.startswith(('common/', 'daemon/', 'plugin/', 'tests/', 'bench/')) and f.endswith(('.c', '.h')):
            text = open(os.path.join(ROOT, f), encoding='utf-8', errors='replace').read()
            for m in COMMENT.finditer(text):
                for n in CNAME.findall(m.group(0)):
                    if not n.startswith(LINUX_TREE) and not exists(n, every, bases):
                        out.append((f, text.count('\n', 0, m.start()) + 1, n))
        elif f.endswith(('.sh', '.py')) and not f.startswith('tests/fuzz/corpus/'):
            with open(os.path.join(ROOT, f), encoding='utf-8', errors='replace') as fh:
                for i, line in enumerate(fh, 1):
                    if '#' in line:
                        out += [(f, i, n) for n in BARE.findall(line[line.index('#'):])
                                if not exists(n, every, bases)]
    return out


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
    for f, line, n in stale_comments(every):
        print('%s:%d: a comment names %s, which does not exist' % (f, line, n))
        bad += 1
    if bad:
        sys.exit(1)
    print('%s: names every source file, and only files that exist; so do the comments' % DOC)


if __name__ == '__main__':
    main()
