#!/usr/bin/env python3
"""make_images.py — writes the small image fixtures in tests/data/ (img_*), once; the Lua tests
(tests/lua/test_image.lua) check that lm.load_image decodes them to the pixels below.

The PNGs are written by hand here (zlib + struct: every chunk, filter byte and Adam7 pass as the
PNG specification lays them out), so each one holds exactly the case it tests — a 4-bit palette
with tRNS, 2-bit gray, 16-bit RGB, gray + alpha, gray with a tRNS key, an interlaced RGBA — which
PIL would not write. PIL (python3-pil) then checks that it decodes each PNG to the same pixels,
and writes the JPEGs (baseline RGB 4:2:0, gray, progressive, CMYK, and a flat gray 512 x 512
progressive one for the memory limit); what PIL decodes them to is kept beside them as .npy files
of shape (C, H, W), uint8, for the tests to compare against.

Regenerate (needs numpy and PIL: apt-get install python3-numpy python3-pil):
    python3 tests/data/make_images.py
Pixel formulas (x, y from 0; c the channel), repeated in tests/lua/test_image.lua:
    img_palette4_trns.png  6 x 4, 4-bit palette, index (3 y + 5 x) mod 16, entry k =
                           (17 k, 255 - 13 k, 40 k mod 256), alpha (k < 4: 60 k, else 255)
    img_gray2.png          7 x 3, 2-bit gray, (x + 2 y) mod 4 (loads as 85 times that)
    img_rgb16.png          3 x 2, 16-bit RGB, sample = 256 hi + lo with hi = 50 c + 30 y + 20 x,
                           lo = 0xff when x + y + c is odd, else 0x01 (loads as hi)
    img_la8.png            5 x 4, gray + alpha: gray 12 (5 y + x), alpha 255 - 10 (5 y + x)
    img_gray_trns.png      4 x 4, gray (50 x + 25 y) mod 256, tRNS gray 100 (transparent)
    img_adam7_rgba.png     10 x 9, RGBA, interlaced (Adam7): (64 c + 17 y + 7 x) mod 256
"""
import os
import struct
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


# ---------------------------------------------------------------- PNG by hand

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pack_row(samples, depth):
    """One row of samples (ints) at the bit depth, big-endian, packed as PNG packs them."""
    if depth == 16:
        return b"".join(struct.pack(">H", int(s)) for s in samples)
    if depth == 8:
        return bytes(int(s) for s in samples)
    per = 8 // depth
    out = bytearray()
    for i in range(0, len(samples), per):
        b = 0
        for j in range(per):
            s = int(samples[i + j]) if i + j < len(samples) else 0
            b |= s << (8 - depth * (j + 1))
        out.append(b)
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(name, img, color_type, depth, palette=None, trns=None, interlace=False):
    """img: (H, W, samples per pixel) of ints. Filter type 0 (None) on every row."""
    h, w = img.shape[:2]
    raw = bytearray()
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        sub = img[y0::dy, x0::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue  # an empty pass has no rows at all
        for row in sub:
            raw += b"\x00" + pack_row(row.reshape(-1), depth)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0))
    if palette is not None:
        out += chunk(b"PLTE", bytes(int(v) for rgb in palette for v in rgb))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    out += chunk(b"IEND", b"")
    with open(path(name), "wb") as f:
        f.write(out)


def grid(h, w):
    y, x = np.mgrid[0:h, 0:w]
    return y, x


def main():
    from PIL import Image

    def pil_rgba(name):
        return np.asarray(Image.open(path(name)).convert("RGBA"))

    # ---- 4-bit palette with tRNS -> RGBA
    y, x = grid(4, 6)
    idx = (3 * y + 5 * x) % 16
    k = np.arange(16)
    pal = np.stack([17 * k, 255 - 13 * k, (40 * k) % 256], 1)
    alpha = np.where(k < 4, 60 * k, 255)
    write_png("img_palette4_trns.png", idx[:, :, None], 3, 4, palette=pal,
              trns=bytes(int(a) for a in alpha[:4]))
    want = np.concatenate([pal[idx], alpha[idx][:, :, None]], 2)
    assert (pil_rgba("img_palette4_trns.png") == want).all()

    # ---- 2-bit gray
    y, x = grid(3, 7)
    g = (x + 2 * y) % 4
    write_png("img_gray2.png", g[:, :, None], 0, 2)
    assert (np.asarray(Image.open(path("img_gray2.png")).convert("L")) == 85 * g).all()

    # ---- 16-bit RGB (PIL reads it as 8-bit RGB of the high bytes, as png_set_strip_16 does)
    y, x = grid(2, 3)
    c = np.arange(3)[None, None, :]
    hi = 50 * c + 30 * y[:, :, None] + 20 * x[:, :, None]
    lo = np.where((x[:, :, None] + y[:, :, None] + c) % 2 == 1, 0xFF, 0x01)
    write_png("img_rgb16.png", hi * 256 + lo, 2, 16)
    assert (np.asarray(Image.open(path("img_rgb16.png")).convert("RGB")) == hi).all()

    # ---- gray + alpha
    y, x = grid(4, 5)
    i = 5 * y + x
    write_png("img_la8.png", np.stack([12 * i, 255 - 10 * i], 2), 4, 8)
    assert (np.asarray(Image.open(path("img_la8.png"))) == np.stack([12 * i, 255 - 10 * i], 2)).all()

    # ---- gray with a tRNS key
    y, x = grid(4, 4)
    g = (50 * x + 25 * y) % 256
    write_png("img_gray_trns.png", g[:, :, None], 0, 8, trns=struct.pack(">H", 100))
    la = np.asarray(Image.open(path("img_gray_trns.png")).convert("LA"))
    assert (la[:, :, 0] == g).all() and (la[:, :, 1] == np.where(g == 100, 0, 255)).all()

    # ---- interlaced RGBA
    y, x = grid(9, 10)
    c = np.arange(4)[None, None, :]
    rgba = (64 * c + 17 * y[:, :, None] + 7 * x[:, :, None]) % 256
    write_png("img_adam7_rgba.png", rgba, 6, 8, interlace=True)
    assert (pil_rgba("img_adam7_rgba.png") == rgba).all()

    # ---- JPEGs by PIL, and what PIL decodes them to (C, H, W)
    def chw(name):
        a = np.asarray(Image.open(path(name)))
        return (a[None] if a.ndim == 2 else a.transpose(2, 0, 1)).astype(np.uint8)

    y, x = grid(16, 16)
    rgb = np.stack([8 * x + 7, 8 * y + 20, 128 + 60 * np.sin(x / 3.0) * np.cos(y / 4.0)], 2)
    Image.fromarray(rgb.astype(np.uint8), "RGB").save(path("img_rgb.jpg"), quality=90)
    np.save(path("img_rgb_jpg.npy"), chw("img_rgb.jpg"))
    y, x = grid(12, 8)
    Image.fromarray((10 * x + 12 * y + 30).astype(np.uint8), "L").save(path("img_gray.jpg"), quality=90)
    np.save(path("img_gray_jpg.npy"), chw("img_gray.jpg"))
    Image.fromarray(rgb.astype(np.uint8), "RGB").save(path("img_progressive.jpg"), quality=85,
                                                      progressive=True)
    np.save(path("img_progressive_jpg.npy"), chw("img_progressive.jpg"))
    Image.new("CMYK", (8, 8), (10, 20, 30, 40)).save(path("img_cmyk.jpg"), quality=90)
    # flat gray 512 x 512, progressive: libjpeg holds its whole-image coefficients (512 KB) while
    # decoding, which the test's memory limit leaves no room for
    Image.new("L", (512, 512), 90).save(path("img_flat_progressive.jpg"), quality=75, progressive=True)
    assert (np.asarray(Image.open(path("img_flat_progressive.jpg"))) == 90).all()

    for n in sorted(os.listdir(HERE)):
        if n.startswith("img_"):
            size = os.path.getsize(path(n))
            assert size < 2048, f"{n} is {size} bytes (fixtures stay under 2 KB)"
    print("wrote the image fixtures in", HERE)


if __name__ == "__main__":
    main()
