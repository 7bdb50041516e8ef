#!/usr/bin/env bash
# Builds what the GPU machine needs into build/device-bundle (< 60 MiB, no
# MLIR/LLVM library): librecur-runtime, recur-run, the GPU numerics suite and
# the reference LM compiled for sm_90, the benchmark's CUDA models and cuDNN
# baseline, and check.sh, which runs them with the repository's scripts. On
# the GPU machine (CUDA driver, PyTorch, no MLIR), from the repository root:
#   build/device-bundle/check.sh        # writes a summary under $OUT
#
#   scripts/device-bundle.sh [CUDA_ARCH]   (default sm_90)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-sm_90}
build=${RECUR_BUILD_DIR:-$root/build}
bundle=$build/device-bundle

"$root/scripts/build.sh"
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp "$build/bin/recur-run" "$bundle/bin/"
cp "$build/lib/librecur-runtime.so" "$bundle/lib/"
if readelf -d "$bundle/bin/recur-run" | grep -q "RUNPATH.*$build"; then
  echo "device-bundle: recur-run has an absolute RUNPATH; reconfigure $build" >&2
  exit 1
fi

"$root/test/gpu/build-suite.sh" "$bundle/gpu-suite" "$build/bin" "$arch"
cp "$root/scripts/device-check.sh" "$bundle/check.sh"
# The benchmark's models for CUDA and the cuDNN baseline (bench/run runs
# them there with --models).
"$root/bench/device-models.sh" "$bundle/bench-models" "$build/bin" "$arch"

# The models are mostly their kernels' cubins, which compress about 3x: the
# bundle travels with them gzipped, and check.sh unpacks them first.
find "$bundle/gpu-suite" "$bundle/bench-models" -name '*.so' -exec gzip -9 -n {} +

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD 2>/dev/null || commit+="-dirty"
printf 'commit %s\narch %s\nbuilt %s\n' "$commit" "$arch" "$(date -u +%FT%TZ)" > "$bundle/BUILD"

size=$(du -sm "$bundle" | cut -f1)
if ((size >= 60)); then
  echo "device-bundle: $bundle is $size MiB, over the 60 MiB limit" >&2
  exit 1
fi
echo "device-bundle: $bundle ($size MiB, commit $commit, $arch); on the GPU machine run build/device-bundle/check.sh"
