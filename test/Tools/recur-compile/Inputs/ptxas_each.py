"""Runs ptxas on every kernel module of `recur-compile --emit=ptx` output.

recur-compile writes one PTX module per kernel, each after a
"// gpu.module @NAME" line; ptxas takes one module at a time.
usage: ptxas_each.py PTXAS ARCH FILE.ptx
"""
import subprocess
import sys
import tempfile

ptxas, arch, path = sys.argv[1:]
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
        subprocess.run([ptxas, f"-arch={arch}", source, "-o", f"{scratch}/{index}.cubin"], check=True)
print(f"ptxas: {len(modules)} modules assembled for {arch}")
