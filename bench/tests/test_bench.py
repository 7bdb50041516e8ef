"""Tests of bench/run (ctest -L bench).

    test_bench.py smoke --bin DIR --out DIR   every CPU system on tiny workloads,
                                              forward and training steps: report
                                              written, all outputs agree
    test_bench.py check --bin DIR --out DIR   a wrong output is reported as FAIL;
                                              the comparison and workload errors;
                                              BF16 files; Recur's bf16 rows
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(BENCH, "tests", "smoke.json")
SMOKE_BF16 = os.path.join(BENCH, "tests", "smoke-bf16.json")
SKIP = 77

sys.path.insert(0, BENCH)


def run_bench(args, *extra, workloads=SMOKE):
    command = [sys.executable, os.path.join(BENCH, "run"), workloads, "--bin", args.bin,
               "--out", args.out, *extra]
    print("+", " ".join(command), flush=True)
    process = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(process.stderr)
    with open(os.path.join(args.out, os.path.basename(workloads))) as f:
        return process.returncode, json.load(f)


def rows(report):
    return {(w["name"], r["system"]): r for w in report["workloads"] for r in w["results"]}


def smoke(args):
    if not importlib.util.find_spec("torch"):
        print(f"skipped: torch is not installed for {sys.executable}")
        return SKIP
    systems = ["recur-cpu", "onednn-cpu", "torch-nn-lstm", "torch-eager-cell", "torch-script"]
    packed = ["torch-nn-lstm-packed", "torch-nn-lstm-padded"]
    code, report = run_bench(args, "--systems", ",".join(systems + packed + ["cuda"]))
    assert code == 0, f"bench/run exited {code}"
    for name in ("smoke.md", "smoke.json"):
        assert os.path.exists(os.path.join(args.out, name)), name
    found = rows(report)
    for workload in ("smoke-lm", "smoke-lstm"):
        for system in systems:
            row = found[(workload, system)]
            if row["status"] == "unavailable" and system == "onednn-cpu":
                print(f"note: {system}: {row['reason']}")
                continue
            assert row["status"] == "ok", (workload, system, row)
            assert row["check"]["max_abs_error"] <= 1e-5, row["check"]
            assert row["ms"]["min"] <= row["ms"]["median"] <= row["ms"]["max"], row["ms"]
            assert row["peak_rss_mib"] > 0, row
        assert found[(workload, "recur-cpu")]["pipeline"], "no pipeline recorded"
        # Without a GPU the CUDA systems are listed with the reason.
        if not report["machine"]["gpus"]:
            assert found[(workload, "jax-scan")]["reason"] == "no CUDA device"
    # GRU models: Recur, nn.GRU and oneDNN's lbr_gru agree with the
    # reference; the LSTM-only systems say so.
    for workload in ("smoke-gru-lm", "smoke-gru"):
        for system in systems:
            row = found[(workload, system)]
            if row["status"] == "unavailable" and system == "onednn-cpu" and \
                    not row["reason"].startswith("no GRU"):
                continue  # not built here
            if system in ("recur-cpu", "torch-nn-lstm", "onednn-cpu"):
                assert row["status"] == "ok", (workload, system, row)
                assert row["check"]["max_abs_error"] <= 1e-5, row["check"]
            else:
                assert row["status"] == "unavailable", (workload, system, row)
                assert row["reason"].startswith("no GRU models (runs LSTM"), row
    # A cell written in PyTorch: Recur (the traced cell) and PyTorch's step
    # loops, eager and scripted, agree with the reference (the region
    # interpreted in double); nn.LSTM and oneDNN have no such cell.
    for system in systems:
        row = found[("smoke-lnlstm", system)]
        if system in ("recur-cpu", "torch-eager-cell", "torch-script"):
            assert row["status"] == "ok", ("smoke-lnlstm", system, row)
            assert row["check"]["max_abs_error"] <= 1e-5, row["check"]
        else:
            assert row["status"] == "unavailable", ("smoke-lnlstm", system, row)
            assert row["reason"].startswith("no LNLSTM models"), row
    # Packed batches: Recur, and nn.LSTM/nn.GRU on a PackedSequence and on
    # the padded rectangle, agree with the reference (zeros past each row's
    # length, the LM's logits there the bias); the systems without lengths
    # say so, and the packed rows run packed batches only.
    for workload in ("smoke-lm-varlen", "smoke-gru-varlen"):
        for system in systems + packed:
            row = found[(workload, system)]
            if system in ["recur-cpu"] + packed:
                assert row["status"] == "ok", (workload, system, row)
                assert row["check"]["max_abs_error"] <= 1e-5, row["check"]
            elif not (system == "onednn-cpu" and row["reason"].startswith("not built")):
                assert row["status"] == "unavailable", (workload, system, row)
                assert row["reason"].startswith("takes no sequence lengths"), row
    for system in packed:
        row = found[("smoke-lstm", system)]
        assert row["status"] == "unavailable" and \
            row["reason"].startswith("runs packed batches only"), row
    # A training step: every row's first-step loss and updated weights agree
    # with the reference's.
    for system in systems:
        row = found[("smoke-lm-train", system)]
        if row["status"] == "unavailable" and system == "onednn-cpu":
            continue
        assert row["status"] == "ok", (system, row)
        assert row["check"]["max_abs_error"] <= 1e-5, row["check"]
    assert report["versions"]["torch"] and report["recur"]["commit"]
    print("pass")
    return 0


def check_compare():
    import numpy as np
    from benchlib.check import compare
    want = {"y": np.array([1.0, -2.0, 0.0], np.float32)}
    ok = compare({"y": want["y"] + np.float32(1e-5)}, want, 1e-4)
    assert ok["pass"] and ok["mismatches"] == 0, ok
    # The bound scales with 1 + |want|: 3e-4 off 2.0 passes, 2e-4 off 0.0 fails.
    edge = compare({"y": np.array([1.0, -2.0003, 2e-4], np.float32)}, want, 1e-4)
    assert not edge["pass"] and edge["mismatches"] == 1, edge
    nan = compare({"y": np.array([np.nan, -2.0, 0.0], np.float32)}, want, 1e-4)
    assert not nan["pass"] and nan["nans"] == 1, nan
    shape = compare({"y": np.zeros(4, np.float32)}, want, 1e-4)
    assert not shape["pass"] and "shape" in shape["error"], shape
    missing = compare({}, want, 1e-4)
    assert not missing["pass"] and "no output 'y'" in missing["error"], missing


def check_speedups():
    from benchlib.report import add_speedups

    def row(system, ms, device="cpu", status="ok"):
        return {"system": system, "device": device, "status": status, "ms": {"median": ms}}
    # Against the default system's row, wherever it stands among the stages.
    rows = [row("recur-cpu-none", 8.0), row("recur-cpu", 2.0), row("recur-cpu-wavefront", 4.0),
            row("onednn-cpu", 3.0), row("recur-cuda-all", 1.0, "cuda"), row("cudnn", 5.0, "cuda")]
    add_speedups(rows)
    speedups = {r["system"]: r["recur_speedup"] for r in rows}
    assert speedups == {"recur-cpu-none": 4.0, "recur-cpu": 1.0, "recur-cpu-wavefront": 2.0,
                        "onednn-cpu": 1.5, "recur-cuda-all": 1.0, "cudnn": 5.0}, speedups


def check_system_names():
    from benchlib.systems import select
    # The names of the scripted cell rows, and no row twice.
    chosen = [s.name for s in select("torch-script-cell,torch-script,torch-script-cell-cuda")]
    assert chosen == ["torch-script", "torch-script-cuda"], chosen
    try:
        select("torch-scripted")
    except ValueError as error:
        assert "unknown system 'torch-scripted'" in str(error), error
    else:
        raise AssertionError("an unknown system was accepted")


def check_workload_errors(out):
    from benchlib import workloads
    cases = [({"name": "x"}, "missing field 'model'"),
             ({"name": "x", "model": {"kind": "transformer"}, "seq": 1, "batch": 1,
               "warmup": 0, "iters": 1}, "'model.kind' must be one of"),
             ({"name": "x", "model": {"kind": "lstm", "input": 2, "hidden": 2, "layers": 1},
               "seq": 0, "batch": 1, "warmup": 0, "iters": 1}, "'seq' must be a positive"),
             ({"name": "x", "model": {"kind": "lstm", "input": 2, "hidden": 2, "layers": 1},
               "seq": 1, "batch": 1, "warmup": 0, "iters": 1, "mode": "train"},
              "mode 'train' needs model kind 'lstm-lm'"),
             ({"name": "x", "model": {"kind": "lstm", "input": 2, "hidden": 2, "layers": 1},
               "seq": 1, "batch": 1, "warmup": 0, "iters": 1, "mode": "backward"},
              "'mode' must be one of ['forward', 'train']"),
             ({"name": "x", "model": {"kind": "lstm-lm", "vocab": 3, "embed": 2, "hidden": 2,
                                      "layers": 1},
               "seq": 1, "batch": 1, "warmup": 0, "iters": 1, "mode": "train", "lr": 0},
              "'lr' must be a positive number"),
             ({"name": "x", "model": {"kind": "lstm-lm", "vocab": 3, "embed": 2, "hidden": 2,
                                      "layers": 1},
               "seq": 1, "batch": 1, "warmup": 0, "iters": 1, "lr": 1},
              "'lr' and 'clip_norm' belong to mode 'train'"),
             ({"name": "x", "model": {"kind": "lstm", "input": 2, "hidden": 2, "layers": 1},
               "seq": 4, "batch": 1, "warmup": 0, "iters": 1, "lengths": {"min": 5}},
              "'lengths.min' is 5, more than seq 4"),
             ({"name": "x", "model": {"kind": "lstm", "input": 2, "hidden": 2, "layers": 1},
               "seq": 4, "batch": 1, "warmup": 0, "iters": 1, "lengths": 2},
              "'lengths' must be {\"min\": L}")]
    for spec, message in cases:
        path = os.path.join(out, "bad.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        try:
            workloads.load(path)
        except workloads.WorkloadError as error:
            assert message in str(error), (message, str(error))
        else:
            raise AssertionError(f"accepted {spec}")


def check_bf16_files(out):
    import numpy as np
    from benchlib import safetensors
    # To nearest, ties to even (1 + 2^-8 is a tie: down to 1; 1 + 3 * 2^-8
    # up to 1 + 2^-6), overflow to infinity, NaN kept.
    x = np.array([1.0, 1.00390625, 1.01171875, -3.14159, 3.4e38, np.nan], np.float32)
    path = os.path.join(out, "bf16.safetensors")
    safetensors.save(path, {"x": x, "ids": np.arange(3)}, bf16=("x",))
    back = safetensors.load(path)
    want = np.array([1.0, 1.0, 1.015625, -3.140625, np.inf, np.nan], np.float32)
    assert np.array_equal(back["x"], want, equal_nan=True), back["x"]
    assert back["ids"].tolist() == [0, 1, 2]


def check_bf16_rows(args):
    """The bf16 rows: Recur's bf16 models (bf16 products: the model compiled
    with --precision=bf16), weights rounded at bind time, BF16 inputs and
    outputs, and oneDNN's bf16 primitives, checked against the reference on
    the same rounded weights and inputs. The products' and the outputs' own
    rounding is what remains: above f32's error, within bf16's tolerance."""
    code, report = run_bench(args, "--systems", "recur-cpu,onednn-cpu", workloads=SMOKE_BF16)
    assert code == 0, f"bench/run exited {code}"
    found = rows(report)
    for workload in ("smoke-lm-bf16", "smoke-lstm-bf16"):
        for system in ("recur-cpu", "onednn-cpu"):
            row = found[(workload, system)]
            if row["status"] == "unavailable" and system == "onednn-cpu":
                print(f"note: {system}: {row['reason']}")
                continue
            assert row["status"] == "ok" and row["check"]["pass"], row
            assert 1e-5 < row["check"]["max_abs_error"] <= 2e-2, row["check"]
        assert "precision=bf16" in found[(workload, "recur-cpu")]["pipeline"]


def check(args):
    check_compare()
    check_bf16_files(args.out)
    check_bf16_rows(args)
    check_speedups()
    check_system_names()
    check_workload_errors(args.out)
    # A wrong output must be reported, and must fail the run.
    code, report = run_bench(args, "--systems", "recur-cpu", "--only", "smoke-lm",
                             "--inject-error", "recur-cpu")
    assert code == 1, f"bench/run exited {code} on a wrong output"
    row = rows(report)[("smoke-lm", "recur-cpu")]
    assert row["status"] == "FAIL" and row["check"]["mismatches"] == 1, row
    assert row["check"]["max_abs_error"] >= 0.99, row["check"]
    with open(os.path.join(args.out, "smoke.md")) as f:
        # (⚠ marks a row timed while other processes were busy, e.g. a
        # parallel ctest.)
        assert re.search(r"\| recur-cpu( ⚠)? \| cpu \| \*\*FAIL\*\* \|", f.read())
    print("pass")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("test", choices=["smoke", "check"])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    return smoke(args) if args.test == "smoke" else check(args)


if __name__ == "__main__":
    sys.exit(main())
