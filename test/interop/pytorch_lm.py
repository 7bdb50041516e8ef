"""PyTorch interop: a torch LM's state_dict and tokens through Recur.

Builds an LM with the attribute names recur-gen uses (embedding, lstm, proj),
saves its state_dict and tokens as safetensors (written directly, no package
needed), compiles the same architecture with recur-gen + recur-compile, runs it
with recur-run, and matches PyTorch's logits to 1e-4. Exits 77 (ctest: skipped)
with a message when torch is not installed for this Python.

On the GPU machine (no MLIR), --model takes a library compiled ahead of time
(e.g. for --target=cuda) and --torch-device cuda runs PyTorch's side with
cuDNN, TF32 off:
  pytorch_lm.py --bin build/device-bundle/bin --model liblm_reference.so \
      --vocab 10001 --embed 128 --hidden 256 --layers 3 --seq 50 --batch 128 \
      --torch-device cuda
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import torch
    from torch import nn
except ImportError:
    print(f"skipped: torch is not installed for {sys.executable} "
          "(Debian: apt-get install python3-torch)")
    sys.exit(SKIP)

DTYPES = {torch.float32: ("F32", 4), torch.int64: ("I64", 8)}


def save_safetensors(path, tensors):
    """The safetensors format: u64 header length, JSON header, raw data."""
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        tensor = tensor.detach().contiguous().cpu()
        dtype, size = DTYPES[tensor.dtype]
        # Reinterpreting as bytes needs no numpy.
        data = bytes(tensor.flatten().view(torch.uint8).tolist())
        assert len(data) == tensor.numel() * size
        header[name] = {"dtype": dtype, "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", entry
        begin, end = entry["data_offsets"]
        values = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32)
        tensors[name] = values.reshape(entry["shape"])
    return tensors


# The benchmark's PyTorch twin of `recur-gen lstm-lm` (same state_dict names).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from systems.torch_lstm import LanguageModel  # noqa: E402


def run_case(args, tool, shape, fusion):
    """PyTorch vs Recur on one LM shape; returns the max abs error."""
    vocab, embed, hidden, layers, seq, batch = shape
    torch.manual_seed(0)
    model = LanguageModel(vocab, embed, hidden, layers).eval()
    tokens = torch.randint(0, vocab, (seq, batch), dtype=torch.int64)
    with torch.no_grad():
        expected = model.to(args.torch_device)(
            tokens.to(args.torch_device)).cpu()

    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.safetensors")
        inputs = os.path.join(tmp, "inputs.safetensors")
        outputs = os.path.join(tmp, "outputs.safetensors")
        save_safetensors(weights, model.state_dict())
        save_safetensors(inputs, {"tokens": tokens})
        library = args.model
        if not library:
            ir = os.path.join(tmp, "lm.mlir")
            library = os.path.join(tmp, "liblm.so")
            subprocess.run([tool("recur-gen"), "lstm-lm", "--vocab", str(vocab),
                            "--embed", str(embed), "--hidden", str(hidden),
                            "--layers", str(layers), "-o", ir], check=True)
            subprocess.run([tool("recur-compile"), ir, "-o", library, "--quiet",
                            f"--fusion={fusion}"], check=True)
        subprocess.run([tool("recur-run"), library, "--weights", weights,
                        "--inputs", inputs, "--outputs", outputs,
                        "--warmup", "0", "--iters", "1"], check=True,
                       stdout=subprocess.DEVNULL)
        logits = load_safetensors(outputs)["logits"]

    assert logits.shape == expected.shape, (logits.shape, expected.shape)
    return logits, (logits - expected).abs().max().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="directory of recur tools")
    parser.add_argument("--model", help="a compiled LM library (default: "
                        "compile one with recur-gen and recur-compile for each "
                        "--fusion level and each shape)")
    for name, default in [("vocab", 37), ("embed", 8), ("hidden", 12),
                          ("layers", 2), ("seq", 7), ("batch", 3)]:
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--fusion", default="none,hoist,cell,wavefront",
                        help="comma-separated recur-compile --fusion levels")
    parser.add_argument("--random-shapes", type=int, default=3,
                        help="seeded random LM shapes (odd sizes, T or B of "
                        "1, 1-4 layers) in addition to the given one")
    parser.add_argument("--torch-device", default="cpu")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()

    torch.set_num_threads(1)
    if args.torch_device.startswith("cuda"):
        if not torch.cuda.is_available():
            print("skipped: no CUDA device for torch")
            sys.exit(SKIP)
        # fp32 means fp32: no TF32 in cuDNN's or cuBLAS's matmuls.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    shapes = [(args.vocab, args.embed, args.hidden, args.layers, args.seq,
               args.batch)]
    levels = args.fusion.split(",")
    if args.model:
        # A given library has its own fusion level; one shape, one run.
        levels = ["(compiled)"]
    else:
        rng = random.Random(2026)
        for index in range(args.random_shapes):
            seq, batch = rng.randint(1, 9), rng.randint(1, 5)
            if index == 0:
                seq = 1
            elif index == 1:
                batch = 1
            shapes.append((rng.randint(2, 60), rng.randint(1, 20),
                           2 * rng.randint(1, 20) + 1, rng.randint(1, 4),
                           seq, batch))
    tool = lambda name: os.path.join(args.bin, name)
    failed = False
    for shape in shapes:
        for fusion in levels:
            logits, error = run_case(args, tool, shape, fusion)
            print(f"pytorch interop: torch {torch.__version__} on "
                  f"{args.torch_device}, fusion {fusion}, "
                  f"(vocab, embed, hidden, layers, seq, batch) = {shape}, "
                  f"logits {list(logits.shape)}, max abs error {error:.3g}")
            if error > args.tolerance:
                print(f"FAIL: Recur's logits differ from PyTorch's by more "
                      f"than {args.tolerance}")
                failed = True
    if failed:
        sys.exit(1)
    print("pass")


if __name__ == "__main__":
    main()
