#!/usr/bin/python3
"""gguf_check.py DIR — the gguf Python package's side of tests/lua/test_files.lua (ggml's own
reader, writer and reference quantizers, https://pypi.org/project/gguf/).

1. Reads DIR/lumen.gguf, which Lumen wrote, with gguf.GGUFReader and checks what ggml would see:
   the tensors' names, ggml types, shapes (ne, innermost first), offsets aligned to 32, the
   metadata strings; the plain tensors' values against DIR/lumen_<name>.npy (Lumen's values;
   bf16 through its bits); and that gguf.quants.dequantize of each block tensor's bytes equals
   DIR/lumen_<name>_float.npy, Lumen's x:float() of it, exactly.
2. Writes DIR/py.gguf with gguf.GGUFWriter: Q4_0 and Q8_0 tensors quantized by
   gguf.quants.quantize (ggml's reference quantizers in numpy) from known float data, saved beside
   it as DIR/py_<rows>.npy (0.1 + 2 cos(i) over a [4, 64] grid; a seeded random-normal [8, 96]),
   an F32 and an F16 tensor, and metadata of several value types. Lumen loads the file and
   compares each block tensor byte for byte with lm.load_npy(...):to('q4_0' / 'q8_0').
Prints one line "ok ..." on success; raises (exit status 1) on any mismatch.
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T

DIR = sys.argv[1]

# name in lumen.gguf -> (ggml type, C-order shape, numpy dtype of the plain values or None)
EXPECT = {
    "w.q4_0": (T.Q4_0, (4, 64), None),
    "w.q8_0": (T.Q8_0, (3, 32), None),
    "blk.0.q4_0": (T.Q4_0, (2, 1, 96), None),
    "f32": (T.F32, (2, 3), np.float32),
    "f64": (T.F64, (5,), np.float64),
    "f16": (T.F16, (3, 2), np.float16),
    "bf16": (T.BF16, (2, 2), None),
    "i8": (T.I8, (4,), np.int8),
    "i32": (T.I32, (2, 2), np.int32),
    "i64": (T.I64, (3,), np.int64),
}


def fail(msg):
    raise SystemExit("gguf_check: " + msg)


def field_str(reader, key):
    f = reader.fields.get(key)
    if f is None:
        fail("metadata key %r is missing (keys: %s)" % (key, sorted(reader.fields)))
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def check_lumen_file():
    r = gguf.GGUFReader(os.path.join(DIR, "lumen.gguf"))
    names = [t.name for t in r.tensors]
    if sorted(names) != sorted(EXPECT):
        fail("tensors %s, expected %s" % (sorted(names), sorted(EXPECT)))
    if field_str(r, "general.architecture") != "lumen":
        fail("general.architecture is %r" % field_str(r, "general.architecture"))
    if field_str(r, "note") != "caf\u00e9":
        fail("note is %r" % field_str(r, "note"))
    for t in r.tensors:
        qtype, shape, dt = EXPECT[t.name]
        if t.tensor_type != qtype:
            fail("%s: ggml type %s, expected %s" % (t.name, t.tensor_type.name, qtype.name))
        if [int(n) for n in t.shape] != list(reversed(shape)):
            fail("%s: ne %s, expected %s (the C-order shape reversed)" % (t.name, list(t.shape), list(reversed(shape))))
        if t.data_offset % 32:
            fail("%s: data at byte %d, not aligned to 32" % (t.name, t.data_offset))
        if qtype in (T.Q4_0, T.Q8_0):
            got = gguf.quants.dequantize(np.asarray(t.data), qtype)
            want = np.load(os.path.join(DIR, "lumen_%s_float.npy" % t.name))
            if got.shape != want.shape or got.dtype != np.float32 or not np.array_equal(got, want):
                bad = np.argwhere(got != want)[:3] if got.shape == want.shape else "shape %s vs %s" % (got.shape, want.shape)
                fail("%s: gguf.quants.dequantize differs from Lumen's x:float() at %s" % (t.name, bad))
        elif qtype == T.BF16:  # bytes; as float32 through the bits
            bits = np.asarray(t.data).reshape(-1).view(np.uint16).astype(np.uint32) << 16
            got = bits.view(np.float32).reshape(shape)
            want = np.load(os.path.join(DIR, "lumen_bf16.npy"))
            if not np.array_equal(got, want):
                fail("bf16: %s, expected %s" % (got.ravel(), want.ravel()))
        else:
            got = np.asarray(t.data)
            want = np.load(os.path.join(DIR, "lumen_%s.npy" % t.name))
            if got.dtype != dt or got.shape != shape or not np.array_equal(got, want):
                fail("%s: %s %s %s, expected %s %s %s" % (t.name, got.dtype, got.shape, got.ravel()[:6],
                                                         want.dtype, want.shape, want.ravel()[:6]))
    return len(r.tensors)


def write_py_file():
    cos = (0.1 + 2 * np.cos(np.arange(4 * 64))).astype(np.float32).reshape(4, 64)
    randn = np.random.default_rng(34).standard_normal((8, 96)).astype(np.float32)
    np.save(os.path.join(DIR, "py_cos.npy"), cos)
    np.save(os.path.join(DIR, "py_randn.npy"), randn)
    w = gguf.GGUFWriter(os.path.join(DIR, "py.gguf"), "lumen-check")
    w.add_string("note", "written by gguf-py")
    w.add_uint32("count", 7)
    w.add_float32("scale", 0.25)
    w.add_bool("flag", True)
    w.add_array("ints", [1, -2, 3])
    w.add_array("words", ["a", "b c"])
    for name, x in (("cos", cos), ("randn", randn)):
        for qtype in (T.Q4_0, T.Q8_0):
            q = gguf.quants.quantize(x, qtype)
            w.add_tensor("%s.%s" % (name, qtype.name.lower()), q, raw_dtype=qtype)
    w.add_tensor("cos.f32", cos)
    w.add_tensor("cos.f16", cos.astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    n = check_lumen_file()
    write_py_file()
    try:
        from importlib.metadata import version
        v = version("gguf")
    except Exception:  # noqa: BLE001  (the version is only printed)
        v = "?"
    print("ok: gguf %s read %d tensors of lumen.gguf (block tensors dequantized equal), wrote py.gguf"
          % (v, n))


main()
