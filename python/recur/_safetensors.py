"""The safetensors format with NumPy only: an 8-byte little-endian header
length, a JSON header naming each tensor's dtype, shape and byte range, then
the data (what recur-run --weights and --inputs read). bench/benchlib keeps
a copy of its own: its runners also run where this package is not."""
import json
import struct
from typing import Dict

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
NAMES = {np.dtype(value): key for key, value in DTYPES.items()}


def save(path: str, tensors: Dict[str, np.ndarray]) -> None:
    """Writes {name: array} (anything np.asarray takes, a torch tensor on
    the CPU included)."""
    header, offset, arrays = {}, 0, []
    for name, array in tensors.items():
        array = np.ascontiguousarray(np.asarray(array))
        dtype = NAMES.get(array.dtype)
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
            f.write(array.tobytes())


def load(path: str) -> Dict[str, np.ndarray]:
    """{name: array}, writable copies."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    data = memoryview(raw)[8 + length:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in DTYPES:
            raise ValueError(f"{path}: tensor '{name}' has dtype {entry['dtype']}; "
                             f"supported: {', '.join(DTYPES)}")
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]]) \
            .reshape(entry["shape"]).copy()
    return tensors
