#!/usr/bin/env python3
"""Training a cell written in PyTorch: recur.compile_rnn(cells, train=True)
(the backward recurrence derived from the cell's region) against PyTorch
running the same cells, eager step by step and as fastrnns scripts them
(TorchScript), side by side in one process: same weights, input and loss
(MSE on a linear head plus the final state), torch.optim.SGD around each.
Each row is checked on the first step's loss and on the parameters after
its steps against the same training in float64 (eager PyTorch), the float32
rows' own rounding included: PyTorch's eager float32 row shows how far
float32 rounding alone takes them. Run from a build tree:
  RECUR_BUILD_DIR=build PYTHONPATH=python python3 bench/train-cells-from-pytorch.py
"""
import argparse
import copy
import os

# As bench/cells-vs-pytorch.py: keep GNU OpenMP (PyTorch's) from spinning
# against OpenBLAS's threads; LLVM's libomp (Recur's) does not read it.
os.environ.setdefault("GOMP_SPINCOUNT", "0")
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recur  # noqa: E402
from test_compile_rnn import LayerNormLSTMCell, PeepholeLSTMCell, run_eager  # noqa: E402
from systems.custom_cells import ScriptedLayer  # noqa: E402

CELLS = {"lnlstm": LayerNormLSTMCell, "peephole": PeepholeLSTMCell}


def eager_layer(cell):
    return lambda x, state: run_eager(cell, x, state, grad=True)


def train(run, parameters, head, x, target, count):
    """Median ms of `count` SGD steps after one, the first step's loss."""
    optimizer = torch.optim.SGD(parameters + list(head.parameters()), lr=0.1)
    times, first = [], None
    batch, hidden = x.shape[1], head.in_features
    for _ in range(count + 1):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        dtype = head.weight.dtype
        state = (torch.zeros(batch, hidden, dtype=dtype), torch.zeros(batch, hidden, dtype=dtype))
        y, (h, c) = run(x.to(dtype), state)
        loss = F.mse_loss(head(y), target.to(dtype)) + 1e-3 * (c ** 2).mean()
        loss.backward()
        optimizer.step()
        times.append((time.perf_counter() - start) * 1e3)
        first = loss.item() if first is None else first
    return statistics.median(times[1:]), first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cell", choices=list(CELLS), default="lnlstm")
    parser.add_argument("--input", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--seq", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fusion", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cell = CELLS[args.cell](args.input, args.hidden)
    head = nn.Linear(args.hidden, 16)
    x = torch.randn(args.seq, args.batch, args.input)
    target = torch.randn(args.seq, args.batch, 16)
    print(f"{args.cell} input {args.input} hidden {args.hidden} T {args.seq} B {args.batch}, "
          f"one SGD step (forward, backward, update), fp32, {args.threads} threads, "
          f"median of {args.steps}")
    rows, final = [], {}
    for name in ["float64", "pytorch-eager", "torchscript", "recur"]:
        mine, my_head = copy.deepcopy(cell), copy.deepcopy(head)
        if name == "float64":
            mine, my_head = mine.double(), my_head.double()
            run = eager_layer(mine)
        elif name == "pytorch-eager":
            run = eager_layer(mine)
        elif name == "torchscript":
            run = torch.jit.script(ScriptedLayer(mine))
        else:
            options = {"fusion": args.fusion} if args.fusion else {}
            trainable = recur.compile_rnn(mine, train=True, threads=args.threads, **options)
            run = trainable
        ms, first = train(run, list(mine.parameters()), my_head, x, target, args.steps)
        final[name] = [p.detach() for p in mine.parameters()]
        rows.append((name, ms, first))
    reference = final.pop("float64")
    rows = rows[1:]
    print("| system | ms per step | first loss | max |Δ param| / (1 + |param|) vs float64 |")
    print("|---|---|---|---|")
    for name, ms, first in rows:
        diff = max(((a.double() - b).abs() / (1 + b.abs())).max().item()
                   for a, b in zip(final[name], reference))
        print(f"| {name} | {ms:.0f} | {first:.6f} | {diff:.2e} |")


if __name__ == "__main__":
    main()
