"""Carries Recur's tools and runtime in the package, so that an installed copy
(`pip install python/`, a wheel) needs no RECUR_BIN or build tree.

They come from the CMake build tree, ../build or $RECUR_BUILD_DIR (build it
first: scripts/build.sh). An editable install (`pip install -e python/`)
carries nothing and finds them in the build tree, as the source tree does.
The package then holds binaries for this machine: its wheel is tagged for
this platform, not as pure Python.
"""

import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

TOOLS = ("recur-gen", "recur-compile")
RUNTIME = "librecur-runtime.so"


class BuildWithTools(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        here = os.path.dirname(os.path.abspath(__file__))
        build = os.environ.get("RECUR_BUILD_DIR", os.path.join(here, "..", "build"))
        files = [(os.path.join(build, "bin", tool), "bin") for tool in TOOLS]
        files.append((os.path.join(build, "lib", RUNTIME), "lib"))
        missing = [path for path, _ in files if not os.path.exists(path)]
        if missing:
            raise SystemExit("recur: cannot package the tools and the runtime, missing "
                             + ", ".join(missing) + ": build Recur first "
                             "(scripts/build.sh), or set RECUR_BUILD_DIR to its build tree")
        for path, folder in files:
            target = os.path.join(self.build_lib, "recur", folder)
            os.makedirs(target, exist_ok=True)
            shutil.copy2(path, target)


class BinaryDistribution(Distribution):
    """Binaries inside: a platform wheel."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithTools}, distclass=BinaryDistribution)
