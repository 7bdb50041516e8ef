"""Compares a pipeline stage run on its own with the stage inside its
pipeline, from the IR that --mlir-print-ir-before dumps.

  ir_dumps.py split DUMPS OUT...   each dumped module of DUMPS, in order, to
                                   an OUT file
  ir_dumps.py same A B             A and B are the same IR (trailing blank
                                   lines aside); the first line that differs
                                   otherwise
"""
import sys

MARKER = "// -----// IR Dump Before "


def lines(path):
    return open(path).read().rstrip().splitlines()


mode, args = sys.argv[1], sys.argv[2:]
if mode == "split":
    dumps = open(args[0]).read().split(MARKER)[1:]
    if len(dumps) != len(args) - 1:
        sys.exit("%s holds %d dumps, expected %d"
                 % (args[0], len(dumps), len(args) - 1))
    for dump, path in zip(dumps, args[1:]):
        open(path, "w").write(dump.split("\n", 1)[1].rstrip() + "\n")
elif mode == "same":
    a, b = lines(args[0]), lines(args[1])
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            sys.exit("line %d differs:\n  %s\n  %s" % (index + 1, x, y))
    if len(a) != len(b):
        sys.exit("%d lines against %d" % (len(a), len(b)))
    print("same IR: %d lines" % len(a))
else:
    sys.exit("unknown mode " + mode)
