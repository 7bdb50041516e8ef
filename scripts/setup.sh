#!/usr/bin/env bash
# Installs what Recur needs on Debian (idempotent) and checks the CUDA toolkit.
# Run as root, or with sudo available.
set -euo pipefail

packages=(
  cmake ninja-build
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22 libomp-22-dev
  libclang-rt-22-dev  # sanitizer runtimes for -DRECUR_ENABLE_SANITIZERS=ON
  libgtest-dev libgmock-dev libbenchmark-dev libdlpack-dev nlohmann-json3-dev
  python3-torch  # the PyTorch interop test (Debian's Python, /usr/bin/python3)
  python3-pytest  # the Python package's tests (python/tests)
  python3-pip  # installing the package (its python-install test; brings setuptools)
  # bench/: Debian's torch uses netlib's reference BLAS (about 15x slower)
  # unless OpenBLAS is installed; oneDNN for the onednn-cpu baseline; plots.
  # libdnnl-dev's CMake config needs OpenCL's (a Recommends, left out below).
  libopenblas0-pthread libdnnl-dev ocl-icd-opencl-dev python3-numpy python3-matplotlib
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present"
fi

# The ONNX front end (recur.onnx, recur-import-onnx) and its tests: Debian's
# python3-onnx 1.12 fails with Debian's NumPy 1.24 (its node test generators
# use np.float), so onnx comes from PyPI, with a protobuf of its own (the
# upb one: Debian's C++ protobuf shares its descriptor pool with libtorch's
# libonnx 1.12, and onnx 1.16 imported after torch then fails), and ONNX
# Runtime, the tests' independent reference and a bench row. All three go to
# one directory on the tests' PYTHONPATH; Debian's NumPy serves them.
onnx_dir=/opt/recur/python-onnx
onnx_wheels=(onnx==1.16.2 protobuf==4.25.5 onnxruntime==1.19.2)
if ! PYTHONPATH=$onnx_dir /usr/bin/python3 -c 'import onnx, onnxruntime, google.protobuf as p
assert onnx.__version__ == "1.16.2" and p.__version__ == "4.25.5"' 2>/dev/null; then
  if /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --no-deps \
      --upgrade --target "$onnx_dir" "${onnx_wheels[@]}" >/dev/null 2>&1; then
    echo "setup: installed ${onnx_wheels[*]} in $onnx_dir"
  else
    echo "setup: note: could not install ${onnx_wheels[*]} from PyPI; ctest's onnx test will be skipped"
  fi
else
  echo "setup: onnx, protobuf and onnxruntime present in $onnx_dir"
fi

# The CUDA toolkit is not a Debian package here; the GPU target needs it, the
# CPU target and the tests that need no GPU do not.
cuda=/usr/local/cuda
if [[ -x $cuda/bin/ptxas ]]; then
  echo "setup: CUDA toolkit found: $($cuda/bin/ptxas --version | tail -n 1)"
else
  echo "setup: note: no CUDA toolkit at $cuda (ptxas missing): the GPU target and its ptxas checks are unavailable; everything else works"
fi

# cuobjdump lists the cubins a CUDA model carries (a test checks for sm_90).
# The toolkit here lacks it; NVIDIA publishes it on PyPI.
cuobjdump_dir=/opt/recur/cuda-tools
if [[ -x $cuda/bin/ptxas ]] && ! command -v cuobjdump >/dev/null &&
    [[ ! -x $cuobjdump_dir/nvidia/cu13/bin/cuobjdump ]]; then
  if python3 -m pip install --quiet --disable-pip-version-check --target "$cuobjdump_dir" \
      nvidia-cuda-cuobjdump >/dev/null 2>&1; then
    echo "setup: installed cuobjdump in $cuobjdump_dir"
  else
    echo "setup: note: could not install cuobjdump from PyPI; its test will be unsupported"
  fi
fi
