#!/usr/bin/env python3
"""No include cycle among the modules of zcfs-serve and zcfsd.

A module is a folder of daemon/serve or daemon/zcfsd (core, fuse,
transport, ...; model, budget, ...). Module A depends on module B when a
file of A includes a header of B. Prints every cycle found among the
modules (and among single headers) and exits 1 if there is one."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
PROGRAMS = ['daemon/serve', 'daemon/zcfsd']
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(path):
    """Project headers PATH includes, as paths from the repository root."""
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        text = f.read()
    out = []
    for inc in INCLUDE.findall(text):
        cand = inc if '/' in inc else os.path.join(os.path.dirname(path), inc)
        if os.path.exists(os.path.join(ROOT, cand)):
            out.append(os.path.normpath(cand))
    return out


def module(program, path):
    rel = os.path.relpath(path, program)
    return rel.split('/')[0] if '/' in rel else '(top)'


def cycles(graph):
    """Every elementary cycle's node list, found by DFS (graphs are small)."""
    found, seen = [], set()

    def walk(node, stack, on):
        for nxt in sorted(graph.get(node, ())):
            if nxt in on:
                cyc = stack[stack.index(nxt):]
                key = frozenset(cyc)
                if key not in seen:
                    seen.add(key)
                    found.append(cyc + [nxt])
            elif len(stack) < 12:
                walk(nxt, stack + [nxt], on | {nxt})

    for n in sorted(graph):
        walk(n, [n], {n})
    return found


def main():
    bad = 0
    for program in PROGRAMS:
        files = []
        for dp, _, fn in os.walk(os.path.join(ROOT, program)):
            files += [os.path.relpath(os.path.join(dp, f), ROOT) for f in fn if f.endswith(('.c', '.h'))]
        mods, hdrs = {}, {}
        for f in files:
            for h in includes(f):
                if not h.startswith(program + '/'):
                    continue
                a, b = module(program, f), module(program, h)
                if a != b:
                    mods.setdefault(a, set()).add(b)
                if f.endswith('.h'):
                    hdrs.setdefault(f, set()).add(h)
        for kind, graph in (('module', mods), ('header', hdrs)):
            for cyc in cycles(graph):
                bad += 1
                print('include cycle among %s %ss: %s' % (program, kind, ' -> '.join(cyc)))
    if bad:
        sys.exit(1)
    print('include cycles: none among the modules of %s' % ' and '.join(PROGRAMS))


if __name__ == '__main__':
    main()
