# lit configuration for Recur's FileCheck tests.
import os
import sys

import lit.formats

config.name = "Recur"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unittests", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.recur_obj_root, "test")

# Recur's tools first, then FileCheck, not and count from LLVM 22.
config.environment["PATH"] = os.pathsep.join(
    [config.recur_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%recur_src_root", config.recur_src_root))
config.substitutions.append(("%recur_obj_root", config.recur_obj_root))
config.substitutions.append(("%python", sys.executable))
