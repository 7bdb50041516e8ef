#!/usr/bin/env python3
"""A language model's training step driven from PyTorch: Recur's compiled
model (recur.compile(lm, train=True)) against PyTorch's own module, side by
side in one process, same weights and tokens: F.cross_entropy,
clip_grad_norm_ and torch.optim.SGD around both. For cells the bench
suite's train workloads do not run yet (the suite's lm-reference-train runs
the LSTM as the recur-cpu-autograd row). Run from a build tree:
  RECUR_BUILD_DIR=build PYTHONPATH=python python3 bench/train-from-pytorch.py --cell gru
"""
import argparse
import copy
import os

# As bench/cells-vs-pytorch.py: keep GNU OpenMP (PyTorch's) from spinning
# against OpenBLAS's threads; LLVM's libomp (Recur's) does not read it.
os.environ.setdefault("GOMP_SPINCOUNT", "0")
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import recur


class LanguageModel(nn.Module):
    def __init__(self, cell, vocab, embed, hidden, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.layers = {"lstm": nn.LSTM, "gru": nn.GRU}[cell](embed, hidden, layers)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.proj(self.layers(self.embedding(tokens))[0])


def steps(model, parameters, tokens, targets, count, clip):
    """Median ms of `count` SGD steps after one, and the first step's loss."""
    optimizer = torch.optim.SGD(parameters, lr=20)
    times, first = [], None
    for step in range(count + 1):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, clip)
        optimizer.step()
        times.append((time.perf_counter() - start) * 1e3)
        first = loss.item() if first is None else first
    return statistics.median(times[1:]), first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cell", choices=["lstm", "gru"], default="gru")
    parser.add_argument("--vocab", type=int, default=10001)
    parser.add_argument("--embed", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--seq", type=int, default=50)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    module = LanguageModel(args.cell, args.vocab, args.embed, args.hidden, args.layers)
    reference = copy.deepcopy(module)
    tokens = torch.randint(0, args.vocab, (args.seq, args.batch))
    targets = torch.randint(0, args.vocab, (args.seq, args.batch))
    compiled = recur.compile(module, train=True, threads=args.threads)
    ours, our_loss = steps(compiled, list(module.parameters()), tokens, targets, args.steps,
                           0.25)
    theirs, their_loss = steps(reference, list(reference.parameters()), tokens, targets,
                               args.steps, 0.25)
    print(f"{args.cell} LM V={args.vocab} E={args.embed} {args.layers}x{args.hidden} "
          f"T={args.seq} B={args.batch}, {args.threads} threads, median of {args.steps} "
          f"steps after one:")
    print(f"  Recur from PyTorch (recur.compile(train=True)): {ours:.1f} ms/step, "
          f"first loss {our_loss:.6f}")
    print(f"  PyTorch nn.{args.cell.upper()}: {theirs:.1f} ms/step, first loss "
          f"{their_loss:.6f}")
    print(f"  PyTorch / Recur: {theirs / ours:.2f}")


if __name__ == "__main__":
    main()
