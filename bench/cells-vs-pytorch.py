#!/usr/bin/env python3
"""Recur's compiled nn.GRU / nn.RNN stacks and cells written in PyTorch
against PyTorch, side by side.

Until the bench suite has these workloads, this compares one process's
timings of the same module, weights and input: PyTorch eager on the CPU
(its own threads set to --threads; a cell runs step by step, as
fastrnns' custom cells do without TorchScript) and Recur at each --fusion
level (nn.GRU / nn.RNN through recur-gen, cells through
recur.compile_rnn), with each output checked against PyTorch's. Run from a
build tree:
  RECUR_BUILD_DIR=build python3 bench/cells-vs-pytorch.py --fusion none hoist
"""
import argparse
import os

# Debian's torch runs GNU OpenMP's pool next to OpenBLAS's threads; spinning,
# they fight over the cores and PyTorch's times double or worse (the suite's
# systems.TORCH_CPU_ENV). GOMP_SPINCOUNT reaches GNU OpenMP (PyTorch's) and
# not LLVM's libomp (Recur's), and must be set before torch loads it.
os.environ.setdefault("GOMP_SPINCOUNT", "0")
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
import recur  # noqa: E402
from recur._compile import _tool  # noqa: E402
from test_compile_rnn import LayerNormLSTMCell, PeepholeLSTMCell, run_eager  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from systems.custom_cells import ScriptedLayer  # noqa: E402

CELLS = {"gru": (lambda **kw: nn.GRU(**kw), []),
         "rnn": (lambda **kw: nn.RNN(nonlinearity="tanh", **kw), ["--nonlinearity", "tanh"])}
SHAPES = [(256, 256, 2, 50, 64), (512, 512, 1, 100, 64), (256, 256, 2, 50, 1)]
# Cells written in PyTorch: (name, cell, input, hidden, T, B); lnlstm at
# fastrnns' sizes (its benchmarks' defaults: input = hidden = 512, T = 100,
# B = 64).
CUSTOM = [("lnlstm", lambda: LayerNormLSTMCell(512, 512), 512, 512, 100, 64),
          ("lnlstm", lambda: LayerNormLSTMCell(256, 256), 256, 256, 50, 16),
          ("lnlstm", lambda: LayerNormLSTMCell(256, 256), 256, 256, 50, 1),
          ("peephole", lambda: PeepholeLSTMCell(512, 512), 512, 512, 100, 64)]


def median_ms(fn, iters):
    fn()
    fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fusion", nargs="+", default=["hoist"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--no-custom", dest="custom", action="store_false",
                        help="skip the cells written in PyTorch")
    parser.add_argument("--no-library", dest="library", action="store_false",
                        help="skip nn.GRU and nn.RNN")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    workdir = tempfile.mkdtemp(prefix="recur-cells-")
    for kind, (make, gen_options) in CELLS.items() if args.library else []:
        for inputs, hidden, layers, seq, batch in SHAPES:
            torch.manual_seed(0)
            module = make(input_size=inputs, hidden_size=hidden, num_layers=layers).eval()
            x = torch.randn(seq, batch, inputs)
            with torch.no_grad():
                want = module(x)[0]
                torch_ms = median_ms(lambda: module(x), args.iters)
            ir = os.path.join(workdir, "model.mlir")
            subprocess.run([_tool("recur-gen"), kind, "--input", str(inputs), "--hidden",
                            str(hidden), "--layers", str(layers), *gen_options, "-o", ir],
                           check=True)
            row = [f"{kind} I={inputs} H={hidden} L={layers} T={seq} B={batch}",
                   f"pytorch {torch_ms:.2f} ms"]
            for fusion in args.fusion:
                # One file per model: dlopen hands back a path it has loaded.
                library = os.path.join(workdir, f"{kind}-{inputs}-{hidden}-{layers}-"
                                       f"{seq}-{batch}-{fusion}.so")
                subprocess.run([_tool("recur-compile"), ir, f"--fusion={fusion}", "-o", library,
                                "--quiet"], check=True)
                model = recur.load(library)
                model.set_threads(args.threads)
                model.bind({name: value.detach() for name, value in module.state_dict().items()})
                error = (model.run(x) - want).abs().max().item()
                if error > 1e-4:
                    sys.exit(f"{row[0]} at --fusion={fusion}: max abs error {error:.2e}")
                recur_ms = median_ms(lambda: model.run(x), args.iters)
                row.append(f"recur[{fusion}] {recur_ms:.2f} ms (pytorch/recur "
                           f"{torch_ms / recur_ms:.2f}, max abs error {error:.1e})")
            print(" | ".join(row), flush=True)
    for name, make, inputs, hidden, seq, batch in CUSTOM if args.custom else []:
        torch.manual_seed(0)
        cell = make().eval()
        x = torch.randn(seq, batch, inputs)
        states = (torch.randn(batch, hidden), torch.randn(batch, hidden))
        # Checked against the cell in float64: over 100 steps a random
        # layer-norm LSTM amplifies fp32 rounding (PyTorch's own fp32 run is
        # 2e-3 off at T=100), so Recur's error is bounded by twice PyTorch's.
        double = make().eval()
        double.load_state_dict(cell.state_dict())
        want = run_eager(double.double(), x.double(), tuple(s.double() for s in states))[0]
        torch_error = (run_eager(cell, x, states)[0].double() - want).abs().max().item()
        torch_ms = median_ms(lambda: run_eager(cell, x, states), args.iters)
        row = [f"{name} I={inputs} H={hidden} T={seq} B={batch}",
               f"pytorch {torch_ms:.2f} ms (max abs error {torch_error:.1e})"]
        # TorchScript (its profiling executor optimises by the second call).
        scripted = torch.jit.script(ScriptedLayer(cell))
        with torch.no_grad():
            script_error = (scripted(x, states)[0].double() - want).abs().max().item()
            script_ms = median_ms(lambda: scripted(x, states), args.iters)
        row.append(f"torchscript {script_ms:.2f} ms (max abs error {script_error:.1e})")
        for fusion in args.fusion:
            compiled = recur.compile_rnn(cell, fusion=fusion, threads=args.threads)
            error = (compiled(x, states)[0].double() - want).abs().max().item()
            if error > 2 * torch_error + 1e-5:
                sys.exit(f"{row[0]} at --fusion={fusion}: max abs error {error:.2e} against "
                         f"float64, PyTorch's fp32 {torch_error:.2e}")
            recur_ms = median_ms(lambda: compiled(x, states), args.iters)
            row.append(f"recur[{fusion}] {recur_ms:.2f} ms (pytorch/recur "
                       f"{torch_ms / recur_ms:.2f}, torchscript/recur "
                       f"{script_ms / recur_ms:.2f}, max abs error {error:.1e})")
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
