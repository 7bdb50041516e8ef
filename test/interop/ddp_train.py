#!/usr/bin/env python3
"""DistributedDataParallel over a compiled nn.LSTM (ctest ddp-training).

Two processes (gloo on 127.0.0.1) each train recur.compile(lstm, train=True)
and a linear head on half of every batch, under DistributedDataParallel,
with truncated BPTT (the state detached between windows), momentum SGD and
gradient clipping. Their weights after the steps must equal those of one
process training the same compiled model on the full batches, and those of
PyTorch's own nn.LSTM trained in float64, within 1e-4 * (1 + |w|).

A DDP communication hook records each gradient bucket as DDP hands it over
for all-reduce, and a gradient hook when the lowest layer's gradient is
computed (the end of the backward's compute): the run prints the bytes
all-reduced per step and the share of them whose all-reduce started while
the backward was still computing. --measure runs the reference LM's layers
(3 x 256, embed 128) for those numbers instead of the small test.

Exits 77 (skipped) where torch or gloo is missing.
"""

import argparse
import copy
import json
import os
import socket
import sys
import tempfile
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel
except ImportError as error:
    print(f"skipped: {error}")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import recur  # noqa: E402

WORLD = 2


class Net(nn.Module):
    """An LSTM (compiled for training when `compiled`) and a linear head."""

    def __init__(self, sizes, compiled):
        super().__init__()
        size, hidden, layers, out = sizes
        torch.manual_seed(1)
        self.lstm = nn.LSTM(size, hidden, layers)
        self.head = nn.Linear(hidden, out)
        self.rnn = recur.compile(self.lstm, train=True, threads=1) if compiled else self.lstm

    def forward(self, x, state):
        y, state = self.rnn(x, state)
        return self.head(y), state


def batches(sizes, steps, seq, batch):
    size, _, _, out = sizes
    generator = torch.Generator().manual_seed(2)
    return [(torch.randn(seq, batch, size, generator=generator),
             torch.randn(seq, batch, out, generator=generator)) for _ in range(steps)]


def train(net, data, rows=None, hooks=None):
    """Momentum SGD with clipping over `data`, the state carried and
    detached; `rows` selects this process's share of every batch."""
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    state = None
    for step, (x, target) in enumerate(data):
        if rows is not None:
            x, target = x[:, rows], target[:, rows]
        optimizer.zero_grad()
        if hooks:
            hooks["step"] = step
        output, state = net(x, state)
        loss = nn.functional.mse_loss(output, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        optimizer.step()
        state = tuple(s.detach() for s in state)


def worker(rank, port, sizes, data, result, bucket_mb):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    net = Net(sizes, compiled=True)
    # DDP's first bucket has a size of its own (1 MiB): the same as the others
    # here, so that buckets follow the layers.
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(bucket_mb * 2**20)
    ddp = DistributedDataParallel(net, bucket_cap_mb=bucket_mb)
    record = {"buckets": [], "computed": {}}

    def bucket_hook(state, bucket):
        buffer = bucket.buffer()
        record["buckets"].append((record["step"], time.perf_counter(),
                                  buffer.numel() * buffer.element_size()))
        return default_hooks.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, bucket_hook)
    # The lowest layer's input weight is the backward's last gradient.
    net.lstm.weight_ih_l0.register_hook(
        lambda grad: record["computed"].__setitem__(record["step"], time.perf_counter()))
    batch = data[0][0].shape[1]
    share = batch // WORLD
    train(ddp, data, slice(rank * share, (rank + 1) * share), record)
    if rank == 0:
        steps = len(data)
        total = sum(size for _, _, size in record["buckets"])
        early = sum(size for step, at, size in record["buckets"]
                    if at < record["computed"][step])
        torch.save({"weights": {k: v.detach().clone() for k, v in net.named_parameters()},
                    "bytes_per_step": total // steps, "buckets_per_step":
                    len(record["buckets"]) // steps, "overlapped": early / total}, result)
    # torch 1.13 can deadlock tearing DDP down: the Reducer's destructor joins
    # the gloo threads while holding the GIL, and a gloo thread may still be
    # releasing the comm hook's Python callback (which needs the GIL). Every
    # collective has completed here and the result is saved, so the worker
    # leaves without running destructors.
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--measure", action="store_true",
                        help="the reference LM's layers (3 x 256), for the report")
    args = parser.parse_args()
    if not dist.is_available() or not dist.is_gloo_available():
        print("skipped: torch.distributed with gloo is unavailable")
        return 77
    if args.measure:
        sizes, steps, seq, batch, bucket_mb = (128, 256, 3, 128), 5, 35, 20, 0.5
    else:
        sizes, steps, seq, batch, bucket_mb = (5, 16, 2, 3), 4, 6, 4, 0.002
    data = batches(sizes, steps, seq, batch)
    with tempfile.TemporaryDirectory() as directory:
        os.environ.setdefault("RECUR_CACHE_DIR", os.path.join(directory, "cache"))
        # Compiled once here, so that the two processes find the libraries.
        Net(sizes, compiled=True)
        result = os.path.join(directory, "rank0.pt")
        mp.spawn(worker, args=(free_port(), sizes, data, result, bucket_mb), nprocs=WORLD)
        distributed = torch.load(result)

        single = Net(sizes, compiled=True)
        train(single, data)
        reference = copy.deepcopy(Net(sizes, compiled=False)).double()
        train(reference, [(x.double(), t.double()) for x, t in data])

    failures = 0
    weights64 = dict(reference.named_parameters())
    for name, want in single.named_parameters():
        got = distributed["weights"][name]
        want64 = weights64[name]
        for what, other in (("one process, compiled", want), ("PyTorch float64", want64)):
            other = other.detach().double()
            error = ((got.double() - other).abs() / (1 + other.abs())).max()
            ok = error <= 1e-4
            failures += not ok
            print(f"{name}: 2 processes vs {what}: max scaled difference {error:.2e} "
                  f"{'ok' if ok else 'FAILED'}")
    print(json.dumps({"bytes_all_reduced_per_step": distributed["bytes_per_step"],
                      "buckets_per_step": distributed["buckets_per_step"],
                      "share_started_during_backward": round(distributed["overlapped"], 3)}))
    # Gradients come per layer: the upper layers' buckets are all-reduced
    # while the lowest layer's backward still computes.
    if distributed["overlapped"] <= 0:
        print("FAILED: no bucket's all-reduce started before the backward's last gradient")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
