"""`pip install python/` (not editable) gives a package that works outside the
source tree: installed into a fresh directory, imported from elsewhere with
no RECUR_BIN, RECUR_BUILD_DIR or RECUR_RUNTIME_LIBRARY, it finds the tools and
the runtime it carries, compiles an nn.LSTM and matches PyTorch.

    install_check.py PYTHON_SOURCE_DIR BUILD_DIR WORK_DIR
"""
import os
import shutil
import subprocess
import sys

import importlib.util

source, build, work = sys.argv[1:4]
for module in ("pip", "setuptools", "torch"):
    if importlib.util.find_spec(module) is None:
        print(f"install_check: no {module} for {sys.executable} (scripts/setup.sh "
              f"installs it): skipped")
        sys.exit(77)
target = os.path.join(work, "site")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# pip builds in the tree it is given: a copy, so that the source tree gets no
# build/ and concurrent runs do not share one.
copy = os.path.join(work, "source")
shutil.copytree(source, copy, ignore=shutil.ignore_patterns(
    "build", "*.egg-info", "__pycache__", "tests", "examples"))
# Debian's setuptools, no index: the check needs no network.
subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                "--no-build-isolation", "--disable-pip-version-check", "--no-index",
                "--target", target, copy],
               check=True, env={**os.environ, "RECUR_BUILD_DIR": build})
for name in ("bin/recur-gen", "bin/recur-compile", "lib/librecur-runtime.so"):
    path = os.path.join(target, "recur", name)
    if not os.path.exists(path):
        sys.exit(f"the installed package lacks {name}")

program = r'''
import os, sys, torch, recur
assert os.path.dirname(recur.__file__).startswith(sys.argv[1]), recur.__file__
torch.manual_seed(0)
lstm = torch.nn.LSTM(6, 8, 2).eval()
x = torch.randn(5, 3, 6)
compiled = recur.compile(lstm)
got, (h, c) = compiled(x)
want, (wh, wc) = lstm(x)
error = max((got - want).abs().max().item(), (h - wh).abs().max().item(),
            (c - wc).abs().max().item())
assert error < 1e-5, error
with recur.load(compiled.library) as model:
    assert model.target == "cpu"
print(f"installed package: {recur.__file__}, max abs error {error:.2e}")
'''
env = {key: value for key, value in os.environ.items()
       if key not in ("RECUR_BIN", "RECUR_BUILD_DIR", "RECUR_RUNTIME_LIBRARY", "PYTHONPATH")}
env.update(PYTHONPATH=target, RECUR_CACHE_DIR=os.path.join(work, "cache"))
subprocess.run([sys.executable, "-c", program, target], check=True, env=env, cwd=work)
