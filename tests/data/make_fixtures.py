#!/usr/bin/env python3
"""make_fixtures.py — writes the small reference files in tests/data/ with numpy and the reference
`safetensors` library, once; the C tests (tests/io/test_io.c) and the Lua tests
(tests/lua/test_files.lua) check that Lumen reads them with the values below.

Regenerate (needs numpy and safetensors: `pip install safetensors numpy` into python3):
    python3 tests/data/make_fixtures.py
Every array holds value(i) of its flat C-order index i, so the tests rebuild it without the files:
    floats: ((7 i) mod 11 - 5) / 4      ints: (7 i) mod 11 - 5      uint8: (37 i) mod 256
    bool: i mod 3 == 0
(The library may order the header's keys differently from one run to the next; the values and the
checks do not change.) values() is imported by tests/io/interop.py.
"""
import gzip
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def values(shape, dtype):
    n = int(np.prod(shape)) if len(shape) else 1
    i = np.arange(n)
    if dtype == np.bool_:
        v = i % 3 == 0
    elif dtype == np.uint8:
        v = (37 * i) % 256
    elif np.issubdtype(dtype, np.floating):
        v = ((7 * i) % 11 - 5) / 4.0
    else:
        v = (7 * i) % 11 - 5
    return v.astype(dtype).reshape(shape)


def path(name):
    return os.path.join(HERE, name)


def main():
    from safetensors.numpy import save_file

    # ---- safetensors, by the reference library
    tensors = {
        "f32": values((2, 3), np.float32),
        "f64": values((4,), np.float64),
        "i32": values((3, 1, 2), np.int32),
        "i64": values((5,), np.int64),
        "u8": values((2, 2), np.uint8),
        "bool": values((7,), np.bool_),
        "f16": values((2, 2), np.float16),
        "i16": values((3,), np.int16),
        "scalar": values((), np.float32),
        "empty": values((0, 3), np.float32),
        "layer.1.weight": values((3, 4), np.float32),
    }
    save_file(tensors, path("ref.safetensors"), metadata={"format": "np", "note": "lumen fixture"})

    # ---- npy, by numpy: the three format versions, Fortran order, big-endian, other dtypes
    def write_version(name, arr, version):
        with open(path(name), "wb") as f:
            np.lib.format.write_array(f, arr, version=version)


    write_version("v1_f32.npy", values((2, 3), np.float32), (1, 0))
    write_version("v2_i64.npy", values((3, 2), np.int64), (2, 0))
    write_version("v3_f64.npy", values((2, 2, 2), np.float64), (3, 0))
    np.save(path("fortran_f32.npy"), np.asfortranarray(values((3, 4), np.float32)))
    np.save(path("big_f64.npy"), values((5,), np.float64).astype(">f8"))
    np.save(path("bool.npy"), values((4,), np.bool_))
    np.save(path("f16.npy"), values((3,), np.float16))
    np.save(path("u8_0d.npy"), values((), np.uint8))
    np.save(path("i32_empty.npy"), values((0, 5), np.int32))

    # ---- IDX (MNIST layout), plain and gzip'ed: 3 images 2x4 of uint8, 3 labels
    imgs = values((3, 2, 4), np.uint8)
    labels = np.array([3, 0, 9], dtype=np.uint8)
    def idx_bytes(arr, code):
        head = struct.pack(">BBBB", 0, 0, code, arr.ndim) + b"".join(struct.pack(">I", d) for d in arr.shape)
        return head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with open(path("images-idx3-ubyte"), "wb") as f:
        f.write(idx_bytes(imgs, 0x08))
    with open(path("images-idx3-ubyte.gz"), "wb") as f:
        f.write(gzip.compress(idx_bytes(imgs, 0x08), mtime=0))
    with open(path("labels-idx1-ubyte.gz"), "wb") as f:
        f.write(gzip.compress(idx_bytes(labels, 0x08), mtime=0))
    with open(path("floats-idx2.idx"), "wb") as f:
        f.write(idx_bytes(values((2, 3), np.float32), 0x0D))
    print("wrote the fixtures in", HERE)


if __name__ == "__main__":
    main()
