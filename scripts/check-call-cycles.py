#!/usr/bin/env python3
"""No call circle among the files of one folder (a module: common/,
daemon/serve/fuse/, daemon/zcfsd/server/, plugin/csi/, ...).

File A uses file B when code of A names a function B defines (a call, or
its address put in a table); A and B are in a circle when each reaches
the other. A folder whose files call each other in a circle has no
order to read it in and no file to change alone: the shared part belongs
in a file both use. Circles still to be untied are listed in
scripts/call-cycle-allow.txt, one per line ("folder: a.c b.c ..."), each
under a comment saying why it is there; an entry that no longer matches a
circle fails, so the list only shrinks. Exits 1 on a circle not listed."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import allowlist  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
ALLOW = 'scripts/call-cycle-allow.txt'
# a function definition: a head at column 0 whose body opens at a '{' at column 0
HEAD = re.compile(r'^[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;]*$')
IDENT = re.compile(r'\b[A-Za-z_]\w*\b')
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def definitions(text, with_static=True):
    """The functions TEXT defines (with_static=False: only those other files can call)."""
    lines = text.split('\n')
    out = set()
    for i, line in enumerate(lines):
        m = HEAD.match(line)
        if not m or line.startswith(('typedef', 'struct', 'enum', 'union', '#')):
            continue
        if not with_static and line.startswith('static'):
            continue
        for j in range(i, min(i + 8, len(lines))):
            if lines[j].startswith('{'):
                out.add(m.group(1))
                break
            if lines[j].rstrip().endswith(';'):
                break
    return out


def circles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def folder_circles():
    files = subprocess.check_output(['git', 'ls-files', 'common/*.c', 'daemon/*.c', 'plugin/*.c'],
                                    cwd=ROOT, text=True).split()
    folders = {}
    for f in files:
        folders.setdefault(os.path.dirname(f), []).append(f)
    found = []
    for folder, members in sorted(folders.items()):
        texts = {}
        for f in members:
            with open(os.path.join(ROOT, f), encoding='utf-8') as fh:
                texts[f] = fh.read()
        owner = {}
        for f in members:
            for name in definitions(texts[f], with_static=False):
                owner.setdefault(name, set()).add(f)
        graph = {}
        for f in members:
            used = set(IDENT.findall(NOISE.sub(' ', texts[f])))
            for name in used & owner.keys():
                for g in owner[name]:
                    if g != f and name not in definitions(texts[f]):
                        graph.setdefault(f, set()).add(g)
        for comp in circles(graph):
            found.append((folder, tuple(os.path.basename(c) for c in comp)))
    return found


def allowed():
    def key(line):
        folder, _, names = line.partition(':')
        return (folder.strip().rstrip('/'), tuple(sorted(names.split())))
    return allowlist.read(ROOT, ALLOW, key)


def main():
    found = folder_circles()
    entries, bad = allowed()
    known = 0
    for folder, comp in found:
        if (folder, comp) in entries:
            known += 1
            continue
        bad.append('call circle in %s/: %s' % (folder, ' '.join(comp)))
    for (folder, comp), n in sorted(entries.items(), key=lambda e: e[1]):
        if (folder, comp) not in found:
            bad.append('%s:%d: %s: %s is no longer a circle: drop or update the entry'
                       % (ALLOW, n, folder, ' '.join(comp)))
    for line in bad:
        print(line)
    if bad:
        sys.exit(1)
    print('call circles: none inside a folder%s'
          % (' but the %d listed in %s' % (known, ALLOW) if known else ''))


if __name__ == '__main__':
    main()
