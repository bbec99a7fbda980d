#!/usr/bin/env python3
"""Write machinery.h (the C array stacks.c trims kernel stacks with) from the one
list in analyzer/lockscope/analysis/frames.py. Reads that file's literal only:
the build needs no installed package.

usage: machinery_h.py FRAMES_PY > machinery.h
"""

import ast
import json
import sys


def prefixes(path: str) -> tuple[str, ...]:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in tree.body:
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        if getattr(target, "id", None) == "MACHINERY_PREFIXES":
            return tuple(ast.literal_eval(node.value))
    raise SystemExit(f"{path}: no MACHINERY_PREFIXES")


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    items = "".join(f"\t{json.dumps(p)},\n" for p in prefixes(sys.argv[1]))
    sys.stdout.write(
        "/* Generated from analyzer/lockscope/analysis/frames.py by machinery_h.py: edit there. */\n"
        "static const char *const machinery[] = {\n" + items + "};\n")


if __name__ == "__main__":
    main()
