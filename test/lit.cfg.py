# lit configuration for Recur's FileCheck tests.
import os
import platform
import sys

import lit.formats

config.name = "Recur"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unittests", "Inputs", "models", "gpu",
                   "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.recur_obj_root, "test")

# Recur's tools first, then FileCheck, not and count from LLVM 22.
config.environment["PATH"] = os.pathsep.join(
    [config.recur_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
# Sanitizer builds: Debian's libMLIR is not instrumented, so attribute storage
# it allocates in a slab that instrumented code poisoned stays poisoned; ASan
# would report reads of it (use-after-poison) that are not errors.
config.environment["ASAN_OPTIONS"] = ":".join(
    filter(None, [os.environ.get("ASAN_OPTIONS", ""), "allow_user_poisoning=0"]))
config.substitutions.append(("%recur_src_root", config.recur_src_root))
config.substitutions.append(("%recur_obj_root", config.recur_obj_root))
config.substitutions.append(("%python", sys.executable))
# mlir-runner's support libraries, for the integration tests.
config.substitutions.append(("%mlir_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))

# The CUDA target: ptxas and libdevice come from the toolkit found at build
# time; cuobjdump lists what a compiled model carries; a driver means CUDA
# models can run here (their "no driver" error tests then do not apply).
if config.recur_cuda_toolkit_dir:
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%ptxas", os.path.join(config.recur_cuda_toolkit_dir, "bin", "ptxas")))
if config.recur_cuobjdump and os.path.exists(config.recur_cuobjdump):
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", config.recur_cuobjdump))
# The GEMM kernels follow the target's vector ISA: x86 tests name CPUs, and
# run AVX2, AVX-512 and AVX512-BF16 code only where this machine has it.
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = cpuinfo.read()
        for flag, feature in ((" avx2", "avx2"), (" avx512f", "avx512f"),
                              (" avx512_bf16", "avx512bf16")):
            if flag in flags:
                config.available_features.add(feature)
    except OSError:
        pass
# ASan reserves terabytes of address space: tests that limit it cannot run.
if config.recur_sanitizers in ("ON", "TRUE", "1"):
    config.available_features.add("sanitizers")
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
