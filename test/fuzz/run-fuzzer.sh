#!/usr/bin/env bash
# Runs a libFuzzer target on its seed corpus without writing into it: new
# inputs go to a fresh WORK_DIR/corpus, crash reproducers to WORK_DIR/.
#
#   test/fuzz/run-fuzzer.sh FUZZER SEED_DIR WORK_DIR [LIBFUZZER_FLAGS...]
#
# Exits non-zero when the fuzzer finds a crash, a leak or a timeout.
set -euo pipefail
fuzzer=${1:?usage: run-fuzzer.sh FUZZER SEED_DIR WORK_DIR [FLAGS...]}
seeds=${2:?}
work=${3:?}
shift 3
rm -rf "$work"
mkdir -p "$work/corpus"
# libFuzzer adds new inputs to the first directory only.
exec "$fuzzer" "$work/corpus" "$seeds" -artifact_prefix="$work/" \
  -print_final_stats=1 "$@"
