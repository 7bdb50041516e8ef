#!/usr/bin/env bash
# Configures (once) and builds Recur into build/ with clang 22, lld and Ninja
# (CMakeLists.txt picks lld for clang's links only: nvcc links with g++).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RECUR_BUILD_DIR:-$root/build}

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE="${RECUR_BUILD_TYPE:-Release}" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    ${RECUR_CMAKE_ARGS:-}
fi
cmake --build "$build"
