"""The protocol between bench/run and a system runner.

bench/run writes a spec (system, device, workload, files, iterations,
threads, precision) to a JSON file and starts the runner with its path. The
runner loads weights and inputs, runs warm-up and timed batches, writes the
last batch's outputs to spec["outputs"], and prints one JSON object:
{"times_ms": [...], "compile_s"?, "versions"?, "notes"?, "warnings"?,
"peak_device_mib"?} or {"unavailable": reason}. Logs go to stderr.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import safetensors  # noqa: E402

load = safetensors.load
save = safetensors.save


def read_spec():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} SPEC.json (written by bench/run)")
    with open(sys.argv[1]) as f:
        return json.load(f)


def report(result):
    print(json.dumps(result))
    sys.stdout.flush()


def unavailable(reason):
    report({"unavailable": reason})
    sys.exit(0)


def time_batches(run, warmup, iters):
    """Calls run() warmup + iters times (run waits for the device itself);
    returns the last result and the timed batches' milliseconds."""
    times = []
    for index in range(warmup + iters):
        start = time.perf_counter()
        out = run()
        elapsed = time.perf_counter() - start
        if index >= warmup:
            times.append(elapsed * 1e3)
    return out, times


def import_recur(spec):
    """Recur's Python package (python/recur) on the bench's build (its tools
    in spec["bin"], the runtime beside them), compiling into a cache beside
    the run's outputs."""
    bin_dir = os.path.abspath(spec["bin"])
    os.environ.setdefault("RECUR_BIN", bin_dir)
    os.environ.setdefault("RECUR_RUNTIME_LIBRARY",
                          os.path.join(os.path.dirname(bin_dir), "lib", "librecur-runtime.so"))
    os.environ.setdefault("RECUR_CACHE_DIR", os.path.join(os.path.dirname(spec["outputs"]),
                                                          "recur-cache"))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(root, "python"))
    import recur
    return recur
