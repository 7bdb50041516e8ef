"""The safetensors format with numpy only: an 8-byte little-endian header
length, a JSON header naming each tensor's dtype, shape and byte range, then
the data. Runners on machines without the safetensors package need it."""
import json
import struct

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
NAMES = {np.dtype(value): key for key, value in DTYPES.items()}


def save(path, tensors):
    """Writes {name: numpy array}; arrays are made contiguous first."""
    header, offset = {}, 0
    arrays = []
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        if array.dtype not in NAMES:
            raise ValueError(f"{path}: tensor '{name}' has dtype {array.dtype}; "
                             f"supported: {', '.join(DTYPES)}")
        header[name] = {"dtype": NAMES[array.dtype], "shape": list(array.shape),
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
    """Returns {name: numpy array} (read-only views of the file's bytes)."""
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
            .reshape(entry["shape"])
    return tensors
