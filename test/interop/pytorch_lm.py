"""PyTorch interop: a torch LM's state_dict and tokens through Recur.

Builds an LM with the attribute names recur-gen uses (embedding, lstm, proj),
saves its state_dict and tokens as safetensors (written directly, no package
needed), compiles the same architecture with recur-gen + recur-compile, runs it
with recur-run, and matches PyTorch's logits to 1e-4. Exits 77 (ctest: skipped)
with a message when torch is not installed for this Python.
"""
import argparse
import json
import os
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


class LanguageModel(nn.Module):
    def __init__(self, vocab, embed, hidden, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, layers)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        y, _ = self.lstm(self.embedding(tokens))
        return self.proj(y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="directory of recur tools")
    args = parser.parse_args()

    vocab, embed, hidden, layers, seq, batch = 37, 8, 12, 2, 7, 3
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = LanguageModel(vocab, embed, hidden, layers).eval()
    tokens = torch.randint(0, vocab, (seq, batch), dtype=torch.int64)
    with torch.no_grad():
        expected = model(tokens)

    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.safetensors")
        inputs = os.path.join(tmp, "inputs.safetensors")
        outputs = os.path.join(tmp, "outputs.safetensors")
        save_safetensors(weights, model.state_dict())
        save_safetensors(inputs, {"tokens": tokens})
        ir = os.path.join(tmp, "lm.mlir")
        library = os.path.join(tmp, "liblm.so")
        tool = lambda name: os.path.join(args.bin, name)
        subprocess.run([tool("recur-gen"), "lstm-lm", "--vocab", str(vocab),
                        "--embed", str(embed), "--hidden", str(hidden),
                        "--layers", str(layers), "-o", ir], check=True)
        subprocess.run([tool("recur-compile"), ir, "-o", library, "--quiet"],
                       check=True)
        subprocess.run([tool("recur-run"), library, "--weights", weights,
                        "--inputs", inputs, "--outputs", outputs,
                        "--warmup", "0", "--iters", "1"], check=True)
        logits = load_safetensors(outputs)["logits"]

    assert logits.shape == expected.shape, (logits.shape, expected.shape)
    error = (logits - expected).abs().max().item()
    print(f"pytorch interop: torch {torch.__version__}, logits {list(logits.shape)}, "
          f"max abs error {error:.3g}")
    if error > 1e-4:
        print("FAIL: Recur's logits differ from PyTorch's by more than 1e-4")
        sys.exit(1)
    print("pass")


if __name__ == "__main__":
    main()
