"""Runs the pipeline a compiled model's description records through recur-opt
and compares the result with recur-compile's --emit=mlir, function signatures
aside (recur-compile drops the names it moved into the description).

  replay_pipeline.py RECUR_OPT MODEL.mlir COMPILED.mlir DESCRIBED.ll
"""
import re
import subprocess
import sys

recur_opt, model, compiled, described = sys.argv[1:5]
text = open(described).read()
match = re.search(r'\\22pipeline\\22:\\22(.*?)\\22', text)
if not match:
    sys.exit("no pipeline in the description of " + described)
pipeline = match.group(1)
print("recorded:", pipeline)
replayed = subprocess.run(
    [recur_opt, model, "--pass-pipeline=builtin.module(%s)" % pipeline],
    check=True, capture_output=True, text=True).stdout


def body(ir):
    return [line for line in ir.splitlines()
            if line.strip() and not line.lstrip().startswith("llvm.func ")]


ours, theirs = body(replayed), body(open(compiled).read())
if ours != theirs:
    for index, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            sys.exit("line %d differs:\n  recur-opt:     %s\n  recur-compile: %s"
                     % (index, a, b))
    sys.exit("recur-opt gives %d lines, recur-compile %d" % (len(ours), len(theirs)))
print("recur-opt runs what recur-compile ran: %d identical lines" % len(ours))
