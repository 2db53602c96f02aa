#!/usr/bin/env python3
"""Writes the HDR still fixtures the tests build, and the SDR rendering they must come out as.

Usage: python3 hdr-fixtures.py DIR
  pq.avif, pq.jxl      a 10-bit BT.2020 PQ (HDR10) still (avifenc), and a 16-bit JPEG XL of it
                       (cjxl), both from Debian
  hlg.avif, hlg.jxl    the same in BT.2100 HLG
  pq-16bit.png, hlg-16bit.png
                       their 16-bit code values, which the tests make HEICs of through libheif's
                       encoder (Debian's heif-enc 1.15 writes no nclx box into a HEIC)
  pq-cicp.png          the PQ code values as a 16-bit PNG that says PQ by a cICP chunk
  hlg-icc.png          the HLG ones as a 16-bit PNG whose ICC profile has a cicp tag (ICC.1:2022)
  pq-p3.avif, pq-p3.jxl, pq-p3-cicp.png
                       the same scene in PQ with Display P3 primaries (nclx 12; libjxl's DCI
                       primaries with D65 white; a cICP chunk 12/16/0/1): the same rendering
  reference.png        the SDR sRGB rendering of the same scene, written here from the
                       BT.2100 formulas (PQ EOTF; HLG inverse OETF and a 1000 cd/m2 display's
                       OOTF; BT.2020 to BT.709 primaries; reference white 203 cd/m2 to SDR
                       white, clipped; sRGB OETF), independently of thumbframe's code
The scene: the twelve patches of the pixel tests (4 x 3, 150 x 100 each), as SDR colours
placed at reference white, so a correct tone map gives them back.
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before the numerical modules are imported
    print(__doc__.strip())
    sys.exit(0)

import os
import struct
import subprocess
import sys
import zlib

import imagecodecs
import numpy as np

PATCHES = [
    (200, 40, 40), (40, 180, 60), (40, 60, 200), (230, 200, 60), (128, 128, 128), (90, 160, 200),
    (210, 120, 170), (30, 30, 30), (240, 240, 240), (150, 90, 40), (100, 200, 180), (250, 150, 50),
]
WHITE = 203.0  # cd/m2, BT.2408 reference white
TO_2020 = np.array([[0.6274, 0.3293, 0.0433], [0.0691, 0.9195, 0.0114], [0.0164, 0.0880, 0.8956]])
TO_709 = np.linalg.inv(TO_2020)
# sRGB/BT.709 to Display P3 in linear light (both from their xy and D65).
TO_P3 = np.array([[0.8224621, 0.1775380, 0.0], [0.0331941, 0.9668058, 0.0], [0.0170827, 0.0723974, 0.9105199]])
M1, M2, C1, C2, C3 = 2610 / 16384, 2523 / 4096 * 128, 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
A = 0.17883277
B, C = 1 - 4 * A, 0.5 - A * np.log(4 * A)


def srgb_to_linear(v):
    v = v / 255.0
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(v):
    v = np.clip(v, 0, 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055) * 255


def pq_oetf(nits):  # inverse EOTF: cd/m2 to signal
    y = np.clip(nits / 10000.0, 0, 1) ** M1
    return ((C1 + C2 * y) / (1 + C3 * y)) ** M2


def pq_eotf(signal):
    p = np.clip(signal, 0, 1) ** (1 / M2)
    return 10000 * (np.maximum(p - C1, 0) / (C2 - C3 * p)) ** (1 / M1)


def hlg_oetf(scene):
    return np.where(scene <= 1 / 12, np.sqrt(3 * np.maximum(scene, 0)), A * np.log(np.maximum(12 * scene - B, 1e-12)) + C)


def hlg_inverse_oetf(signal):
    return np.where(signal <= 0.5, signal ** 2 / 3, (np.exp((signal - C) / A) + B) / 12)


def hlg_display(signal):  # BT.2100 OOTF for a 1000 cd/m2 display (system gamma 1.2)
    scene = hlg_inverse_oetf(signal)
    luminance = scene @ np.array([0.2627, 0.6780, 0.0593])
    return 1000 * scene * (np.maximum(luminance, 0) ** 0.2)[..., None]


def scene():
    image = np.zeros((300, 600, 3))
    for index, colour in enumerate(PATCHES):
        x, y = (index % 4) * 150, (index // 4) * 100
        image[y:y + 100, x:x + 150] = colour
    return image


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def icc_with_cicp(transfer):
    """lcms' sRGB profile with a `cicp` tag (ICC.1:2022) added: BT.2020 primaries, `transfer`."""
    from PIL import ImageCms
    base = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    count = struct.unpack(">I", base[128:132])[0]
    table = [struct.unpack(">4sII", base[132 + 12 * i:144 + 12 * i]) for i in range(count)]
    body = base[132 + 12 * count:]
    shift = 12  # the new table entry
    entries = [(sig, offset + shift, size) for sig, offset, size in table]
    tag = b"cicp" + bytes(4) + bytes([9, transfer, 0, 1])
    entries.append((b"cicp", 132 + 12 * (count + 1) + len(body), len(tag)))
    profile = base[:128] + struct.pack(">I", count + 1) + b"".join(struct.pack(">4sII", *e) for e in entries) + body + tag
    return struct.pack(">I", len(profile)) + profile[4:]


def main(out):
    os.makedirs(out, exist_ok=True)
    linear2020 = srgb_to_linear(scene()) @ TO_2020.T  # SDR white = 1.0
    pq = pq_oetf(linear2020 * WHITE)
    # HLG: the display light of reference white is 203 cd/m2 through the 1000 cd/m2 OOTF, so
    # scene light is solved for it: 1000 * Ys^0.2 * E = 203 * linear (per channel, Ys of E).
    target = linear2020 * WHITE / 1000
    luminance = target @ np.array([0.2627, 0.6780, 0.0593])
    scene_light = target / np.maximum(luminance, 1e-12)[..., None] ** (0.2 / 1.2)
    hlg = hlg_oetf(scene_light)
    for name, signal, transfer in [("pq", pq, 16), ("hlg", hlg, 18)]:
        png = os.path.join(out, name + "-16bit.png")
        with open(png, "wb") as f:
            f.write(imagecodecs.png_encode(np.round(np.clip(signal, 0, 1) * 65535).astype(np.uint16)))
        subprocess.run(["avifenc", "--depth", "10", "--cicp", f"9/{transfer}/9", "--range", "full", "--min", "0",
                        "--max", "4", "-y", "444", png, os.path.join(out, name + ".avif")], check=True,
                       stdout=subprocess.DEVNULL)
        colour = "RGB_D65_202_Rel_PeQ" if name == "pq" else "RGB_D65_202_Rel_HLG"
        subprocess.run(["cjxl", png, os.path.join(out, name + ".jxl"), "-d", "0.5", "-x", f"color_space={colour}"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # PQ with Display P3 primaries: the scene's colours in P3, as AVIF, JPEG XL and a cICP PNG.
    pq_p3 = pq_oetf(srgb_to_linear(scene()) @ TO_P3.T * WHITE)
    png = os.path.join(out, "pq-p3-16bit.png")
    with open(png, "wb") as f:
        f.write(imagecodecs.png_encode(np.round(np.clip(pq_p3, 0, 1) * 65535).astype(np.uint16)))
    subprocess.run(["avifenc", "--depth", "10", "--cicp", "12/16/9", "--range", "full", "--min", "0", "--max", "4", "-y", "444",
                    png, os.path.join(out, "pq-p3.avif")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cjxl", png, os.path.join(out, "pq-p3.jxl"), "-d", "0.5", "-x", "color_space=RGB_D65_DCI_Rel_PeQ"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    encoded = imagecodecs.png_encode(np.round(np.clip(pq_p3, 0, 1) * 65535).astype(np.uint16))
    with open(os.path.join(out, "pq-p3-cicp.png"), "wb") as f:
        f.write(encoded[:33] + chunk(b"cICP", bytes([12, 16, 0, 1])) + encoded[33:])
    # The same code values as PNGs that say PQ by a cICP chunk and HLG by an ICC profile's cicp tag.
    for name, signal, transfer in [("pq-cicp", pq, 16), ("hlg-icc", hlg, 18)]:
        png = imagecodecs.png_encode(np.round(np.clip(signal, 0, 1) * 65535).astype(np.uint16))
        extra = chunk(b"cICP", bytes([9, transfer, 0, 1])) if name.endswith("cicp") else chunk(
            b"iCCP", b"HLG\0\0" + zlib.compress(icc_with_cicp(transfer)))
        with open(os.path.join(out, name + ".png"), "wb") as f:
            f.write(png[:33] + extra + png[33:])  # after the signature and IHDR
    # The reference, from the code values as a decoder sees them (10 bits).
    signal = np.round(pq * 1023) / 1023
    display = pq_eotf(signal) / WHITE
    reference = linear_to_srgb(display @ TO_709.T)
    with open(os.path.join(out, "reference.png"), "wb") as f:
        f.write(imagecodecs.png_encode(np.round(reference).astype(np.uint8)))


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 64)
    main(sys.argv[1])
