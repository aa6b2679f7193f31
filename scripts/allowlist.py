"""The lint allowlists (scripts/*-allow.txt): one entry per line, each
under a comment saying why it is there; a blank line ends a comment's
reach. read() gives {key(line): line number} and the entries without
a comment."""
import os


def read(root, name, key):
    entries, bad, why = {}, [], False
    path = os.path.join(root, name)
    if not os.path.exists(path):
        return entries, bad
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                why = False
            elif line.startswith('#'):
                why = True
            else:
                entries[key(line)] = n
                if not why:
                    bad.append('%s:%d: %s has no comment above it saying why' % (name, n, line))
    return entries, bad
