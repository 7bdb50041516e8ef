"""The safetensors format with numpy only: an 8-byte little-endian header
length, a JSON header naming each tensor's dtype, shape and byte range, then
the data. Runners on machines without the safetensors package need it."""
import json
import struct

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
NAMES = {np.dtype(value): key for key, value in DTYPES.items()}


def bf16_bits(array):
    """f32 values rounded to bfloat16 (to nearest, ties to even, as PyTorch's
    .bfloat16() and recur-run --convert-weights), as their uint16 bits."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(array), np.uint16(0x7FC0), rounded)


def from_bf16_bits(bits):
    """bfloat16 bits as f32 (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def save(path, tensors, bf16=()):
    """Writes {name: numpy array}; arrays are made contiguous first. The f32
    tensors named in `bf16` are stored as BF16, rounded."""
    header, offset = {}, 0
    arrays = []
    for name, array in tensors.items():
        # np.ascontiguousarray would turn a scalar (a loss) into shape [1].
        array = np.asarray(array)
        if not array.flags["C_CONTIGUOUS"]:
            array = np.ascontiguousarray(array)
        dtype = NAMES.get(array.dtype)
        if name in bf16 and dtype == "F32":
            array, dtype = bf16_bits(array), "BF16"
        if dtype is None:
            raise ValueError(f"{path}: tensor '{name}' has dtype {array.dtype}; "
                             f"supported: {', '.join(DTYPES)}")
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        arrays.append(array)
        offset += array.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for array in arrays:
            f.write(array.data)


def load(path):
    """Returns {name: numpy array} (read-only views of the file's bytes; BF16
    tensors widened to f32 copies)."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = memoryview(raw)[8 + length:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        if entry["dtype"] == "BF16":
            bits = np.frombuffer(data[begin:end], dtype=np.uint16)
            tensors[name] = from_bf16_bits(bits).reshape(entry["shape"])
            continue
        if entry["dtype"] not in DTYPES:
            raise ValueError(f"{path}: tensor '{name}' has dtype {entry['dtype']}; "
                             f"supported: {', '.join(DTYPES)}, BF16")
        tensors[name] = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]]) \
            .reshape(entry["shape"])
    return tensors
