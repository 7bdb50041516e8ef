"""Runs ptxas on every kernel module of `recur-compile --emit=ptx` output.

recur-compile writes one PTX module per kernel, each after a
"// gpu.module @NAME" line; ptxas takes one module at a time. With
--resources, prints each kernel's resource use from `ptxas -v`, one line per
kernel: "NAME: R registers, S bytes smem, F bytes stack, T bytes spill
stores, L bytes spill loads".
usage: ptxas_each.py PTXAS ARCH FILE.ptx [--resources]
"""
import re
import subprocess
import sys
import tempfile

ptxas, arch, path = sys.argv[1:4]
resources = "--resources" in sys.argv[4:]
modules = []
for line in open(path):
    if line.startswith("// gpu.module @"):
        modules.append([])
    if modules:
        modules[-1].append(line)
with tempfile.TemporaryDirectory() as scratch:
    for index, module in enumerate(modules):
        source = f"{scratch}/{index}.ptx"
        with open(source, "w") as out:
            out.writelines(module)
        run = subprocess.run(
            [ptxas, "-v", f"-arch={arch}", source, "-o", f"{scratch}/{index}.cubin"],
            check=True, capture_output=True, text=True)
        if not resources:
            continue
        # ptxas -v reports on stderr, per entry function.
        report = run.stderr
        for name in re.findall(r"Compiling entry function '(\w+)'", report):
            section = report[report.index(f"Function properties for {name}"):]
            frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", section)
            usage = section.splitlines()[2]  # "ptxas info : Used R registers, ..."
            used = re.search(r"Used (\d+) registers", usage)
            smem = re.search(r"(\d+) bytes smem", usage)
            print(f"{name}: {used.group(1)} registers, {smem.group(1) if smem else 0} bytes smem, "
                  f"{frame.group(1)} bytes stack, {frame.group(2)} bytes spill stores, "
                  f"{frame.group(3)} bytes spill loads")
print(f"ptxas: {len(modules)} modules assembled for {arch}")
