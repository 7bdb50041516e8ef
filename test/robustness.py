"""Feeds damaged copies of a valid .mlir file to a tool and fails if any run
crashes (dies by a signal or exits with a code other than 0 or 1).

usage: robustness.py TOOL FILE [TOOL-ARGS...]

Damage: the file cut after every line and in the middle of every line, and each
line with its first type or SSA name replaced. A malformed input must give a
diagnostic, never a crash.
"""
import re
import subprocess
import sys


def variants(text):
    lines = text.splitlines(keepends=True)
    for i in range(len(lines)):
        yield f"cut after line {i + 1}", "".join(lines[: i + 1])
        yield f"cut inside line {i + 1}", "".join(lines[:i]) + lines[i][: len(lines[i]) // 2]
        for pattern, replacement in [
            (r"tensor<[^>]*>", "tensor<*xf32>"),
            (r"tensor<[^>]*>", "tensor<?xi1>"),
            (r"%[\w]+", "%undefined"),
            (r"\bf32\b", "i32"),
        ]:
            damaged, count = re.subn(pattern, replacement, lines[i], count=1)
            if count:
                yield f"line {i + 1}: {pattern} -> {replacement}", "".join(
                    lines[:i] + [damaged] + lines[i + 1 :])


def main():
    tool, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = open(path).read()
    runs = crashes = 0
    for description, source in variants(text):
        result = subprocess.run([tool, *args, "-"], input=source.encode(),
                                capture_output=True)
        runs += 1
        if result.returncode not in (0, 1):
            crashes += 1
            print(f"CRASH ({result.returncode}) on {description}:\n"
                  f"{result.stderr.decode(errors='replace')[-2000:]}")
    print(f"{runs} damaged inputs, {crashes} crashes")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
