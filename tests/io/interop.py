#!/usr/bin/python3
"""interop.py DIR — the numpy side of tests/lua/test_files.lua.

1. Reads the files Lumen wrote into DIR (lumen_<dtype>.npy, lumen_t.npy, lumen.safetensors) and
   checks their values: .npy with numpy.load; safetensors with the reference `safetensors`
   library when it is installed, else with read_safetensors below, which applies the library's
   checks (header length, JSON, dtypes, shapes, offsets that tile the data exactly) using only
   json and numpy.
2. Writes files for Lumen to read back (np_*.npy in every format version, Fortran order,
   big-endian, bool, float16; np.safetensors by the library or write_safetensors below).
Values follow tests/data/make_fixtures.py: value(i) of the flat C-order index i. Prints one line
"ok ..." on success; raises (exit status 1) on any mismatch.
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
from make_fixtures import values  # noqa: E402  (the fixtures' formula: value(i) of the flat index)

DIR = sys.argv[1]
DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "int8": np.int8, "float16": np.float16}
ST_CODES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "|u1", "BOOL": "|b1",
            "F16": "<f2", "I16": "<i2", "I8": "|i1", "BF16": "<u2"}  # BF16: its bits (numpy has none)


def expect(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        raise SystemExit("interop: %s: got %s %s %r, expected %s %s %r" % (
            name, got.dtype, got.shape, got.ravel()[:8], want.dtype, want.shape, want.ravel()[:8]))


def read_safetensors(path):
    data = open(path, "rb").read()
    if len(data) < 8:
        raise ValueError("too short")
    (n,) = struct.unpack("<Q", data[:8])
    if n > 100 << 20 or 8 + n > len(data):
        raise ValueError("bad header length")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    if data[8:9] != b"{":
        raise ValueError("header must start with {")
    body = data[8 + n:]
    out, spans = {}, []
    for name, info in header.items():
        if name == "__metadata__":
            if not all(isinstance(v, str) for v in info.values()):
                raise ValueError("metadata values must be strings")
            continue
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        dt = np.dtype(ST_CODES[info["dtype"]])
        if end - begin != count * dt.itemsize:
            raise ValueError("%s: size mismatch" % name)
        spans.append((begin, end))
        out[name] = np.frombuffer(body[begin:end], dtype=dt).reshape(info["shape"])
    at = 0
    for begin, end in sorted(spans):
        if begin != at:
            raise ValueError("offsets do not tile the data")
        at = end
    if at != len(body):
        raise ValueError("offsets do not cover the data")
    return out, header.get("__metadata__", {})


def write_safetensors(path, tensors, metadata):
    names = sorted(tensors, key=lambda k: (-tensors[k].dtype.itemsize, k))
    header, at = {"__metadata__": metadata}, 0
    codes = {v: k for k, v in ST_CODES.items()}
    for k in names:
        a = tensors[k]
        header[k] = {"dtype": codes[a.dtype.str], "shape": list(a.shape),
                     "data_offsets": [at, at + a.nbytes]}
        at += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for k in names:
            f.write(np.ascontiguousarray(tensors[k]).tobytes())


try:
    from safetensors.numpy import load_file, save_file  # noqa: F401
    LIB = "the safetensors library"
except ImportError:
    load_file = save_file = None
    LIB = "interop.py's own reader (the safetensors library is not installed)"

# 1. what Lumen wrote
for name, dt in DTYPES.items():
    expect("lumen_%s.npy" % name, np.load(os.path.join(DIR, "lumen_%s.npy" % name)), values((3, 4), dt))
expect("lumen_t.npy (a transposed view)", np.load(os.path.join(DIR, "lumen_t.npy")),
       np.ascontiguousarray(values((4, 3), np.float32).T))
expect("lumen_0d.npy", np.load(os.path.join(DIR, "lumen_0d.npy")), values((), np.float64))
path = os.path.join(DIR, "lumen.safetensors")
got = load_file(path) if load_file else read_safetensors(path)[0]
for name, dt in DTYPES.items():
    expect("lumen.safetensors:" + name, got[name], values((2, 5), dt))
expect("lumen.safetensors:layer.1.weight", got["layer.1.weight"], values((3, 2), np.float32))
# bfloat16: float32's top 16 bits (the values are exact in it), read by the reader above
bits = read_safetensors(os.path.join(DIR, "lumen_bf16.safetensors"))[0]["bf16"]
expect("lumen_bf16.safetensors:bf16", (bits.astype(np.uint32) << 16).view(np.float32),
       values((2, 5), np.float32))

# 2. files for Lumen
def write_version(name, arr, version):
    with open(os.path.join(DIR, name), "wb") as f:
        np.lib.format.write_array(f, arr, version=version)


write_version("np_v1.npy", values((2, 3), np.float32), (1, 0))
write_version("np_v2.npy", values((3, 2), np.int64), (2, 0))
write_version("np_v3.npy", values((2, 2, 3), np.float64), (3, 0))
np.save(os.path.join(DIR, "np_fortran.npy"), np.asfortranarray(values((3, 5), np.int32)))
np.save(os.path.join(DIR, "np_big.npy"), values((4,), np.float32).astype(">f4"))
np.save(os.path.join(DIR, "np_bool.npy"), values((5,), np.bool_))
np.save(os.path.join(DIR, "np_f16.npy"), values((2, 2), np.float16))
np.save(os.path.join(DIR, "np_u8.npy"), values((6,), np.uint8))
tensors = {"f32": values((2, 3), np.float32), "i64": values((4,), np.int64),
           "bool": values((3,), np.bool_), "conv.weight": values((2, 1, 3, 3), np.float32)}
(save_file or (lambda t, p, metadata: write_safetensors(p, t, metadata)))(
    tensors, os.path.join(DIR, "np.safetensors"), metadata={"written_by": "numpy"})
print("ok: numpy %s read Lumen's files and wrote its own (safetensors through %s)" % (np.__version__, LIB))
