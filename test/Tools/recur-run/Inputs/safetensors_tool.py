"""Writes and edits small safetensors files for recur-run's tests (no packages).

  safetensors_tool.py write OUT NAME:DTYPE:D0xD1:V0,V1,...  (I64 or F32 values)
  safetensors_tool.py set IN OUT NAME INDEX VALUE           (one F32 element)
  safetensors_tool.py rename IN OUT OLD NEW
"""
import json
import struct
import sys

FORMATS = {"F32": "f", "I64": "q"}


def read(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    return header, bytearray(data[8 + size:])


def write(path, header, body):
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text + bytes(body))


def main(command, *args):
    if command == "write":
        header, body = {}, bytearray()
        for spec in args[1:]:
            name, dtype, dims, values = spec.split(":")
            shape = [int(d) for d in dims.split("x")] if dims else []
            packed = b"".join(struct.pack("<" + FORMATS[dtype], (float if dtype == "F32" else int)(v))
                              for v in values.split(","))
            header[name] = {"dtype": dtype, "shape": shape,
                            "data_offsets": [len(body), len(body) + len(packed)]}
            body += packed
        write(args[0], header, body)
    elif command == "set":
        source, target, name, index, value = args
        header, body = read(source)
        offset = header[name]["data_offsets"][0] + 4 * int(index)
        body[offset:offset + 4] = struct.pack("<f", float(value))
        write(target, header, body)
    elif command == "rename":
        source, target, old, new = args
        header, body = read(source)
        header[new] = header.pop(old)
        write(target, header, body)
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(*sys.argv[1:])
