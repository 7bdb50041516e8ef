#!/usr/bin/env bash
# The test command: set-up, build, and every test (lit + GoogleTest via ctest).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${RECUR_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)"
