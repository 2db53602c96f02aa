#!/usr/bin/env python3
"""Writes the RAW fixtures the tests build (DNG with tifffile, numpy and imagecodecs' JPEG).

Usage: python3 raw-fixtures.py DIR
       python3 raw-fixtures.py --bench N WIDTH HEIGHT DIR   (scripts/benchmarks/bench-raw: N DNGs with a
       full-size JPEG preview in DIR/preview, N mosaic-only ones in DIR/mosaic)
Every file shows one scene as the sensor saw it: a horizontal red ramp, a vertical green ramp,
and a red square in the top-left quarter (where it lands shows the orientation applied).
  mosaic.dng          the raw mosaic (RGGB) only, 600x400 (as Android's DngCreator writes)
  mosaic-6.dng        the same, EXIF orientation 6 (the camera held upright)
  preview-6.dng       a full-size JPEG preview in IFD0, the mosaic in a SubIFD, orientation 6
  small-preview.dng   a 300x200 JPEG preview (smaller than the thumbnails), the mosaic
  letterbox.dng       a 640x480 preview of another aspect ratio, the mosaic
  stray-ifd.NEF       a plain TIFF named like a RAW: a 256x171 picture and nothing LibRaw reads
  nikon-6.nef         a maker's TIFF layout, as a Nikon writes it: a 160x120 thumbnail in IFD0,
                      a full-size JPEG preview and the uncompressed mosaic in two SubIFDs,
                      orientation 6 (LibRaw crops a D700's sensor to 596 columns)
  sony.arw            the same layout from a Sony, orientation 1
  pentax.pef          a Pentax's: the 160x120 thumbnail and the mosaic only (demosaiced)
  truncated.dng       preview-6.dng cut in half (its preview whole, its mosaic cut)
  cut-in-preview.dng  preview-6.dng cut inside its preview
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before the numerical modules are imported
    print(__doc__.strip())
    sys.exit(0)

import io
import os
import sys

import numpy as np
import tifffile
from PIL import Image

WIDTH, HEIGHT = 600, 400


def scene(w=None, h=None):
    w, h = w or WIDTH, h or HEIGHT
    y, x = np.mgrid[0:h, 0:w]
    r, g, b = x / w, y / h, 0.5 * np.ones((h, w))
    r[: h // 4, : w // 4], g[: h // 4, : w // 4], b[: h // 4, : w // 4] = 1.0, 0.05, 0.05
    return np.stack([r, g, b], -1)


def mosaic(img, white=4095):
    cfa = np.zeros(img.shape[:2], np.uint16)
    cfa[0::2, 0::2] = img[0::2, 0::2, 0] * white
    cfa[0::2, 1::2] = img[0::2, 1::2, 1] * white
    cfa[1::2, 0::2] = img[1::2, 0::2, 1] * white
    cfa[1::2, 1::2] = img[1::2, 1::2, 2] * white
    return cfa


RAW_TAGS = [(33421, "H", 2, (2, 2)), (33422, "B", 4, (0, 1, 1, 2)), (50717, "I", 1, 4095), (50714, "H", 1, 0)]


def dng_tags(orientation):
    return [(50706, "B", 4, (1, 4, 0, 0)), (50707, "B", 4, (1, 1, 0, 0)), (50708, "s", 0, "thumbframe test"),
            (274, "H", 1, orientation), (271, "s", 0, "Thumbframe"), (272, "s", 0, "RAW 1"),
            (306, "s", 0, "2021:05:06 07:08:09")]


NOISE = False  # --bench: grain, so files compress as photos do


def write(path, orientation=1, preview=None):
    picture = scene() * (0.7 + 0.3 * np.random.rand(HEIGHT, WIDTH, 1)) if NOISE else scene()
    cfa = mosaic(picture)
    with tifffile.TiffWriter(path) as tif:
        if preview is None:
            tif.write(cfa, photometric=32803, subfiletype=0, extratags=dng_tags(orientation) + RAW_TAGS)
            return
        pw, ph = preview
        small = np.asarray(Image.fromarray((picture * 255).astype(np.uint8)).resize((pw, ph)))
        # One strip: a camera's preview is one JPEG stream.
        tif.write(small, photometric="rgb", compression="jpeg", rowsperstrip=ph, subfiletype=1,
                  extratags=dng_tags(orientation), subifds=1)
        tif.write(cfa, photometric=32803, subfiletype=0, extratags=RAW_TAGS)


def write_maker_tiff(path, make, model, orientation=1, preview=True):
    """A non-DNG RAW as the TIFF-based makers lay it out (NEF, ARW, PEF): IFD0 a small RGB
    thumbnail holding the camera's tags, then SubIFDs with the full-size JPEG preview (when
    `preview`) and the uncompressed 12-bit mosaic."""
    picture = scene()
    thumb = np.asarray(Image.fromarray((picture * 255).astype(np.uint8)).resize((160, 120)))
    tags = [(271, "s", 0, make), (272, "s", 0, model), (274, "H", 1, orientation), (306, "s", 0, "2021:05:06 07:08:09")]
    with tifffile.TiffWriter(path) as tif:
        tif.write(thumb, photometric="rgb", subfiletype=1, extratags=tags, subifds=2 if preview else 1)
        if preview:
            tif.write((picture * 255).astype(np.uint8), photometric="rgb", compression="jpeg", rowsperstrip=HEIGHT,
                      subfiletype=1)
        tif.write(mosaic(picture), photometric=32803, subfiletype=0, extratags=RAW_TAGS[:2])


if __name__ == "__main__" and (len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help")):
    print(__doc__)
    sys.exit(0 if len(sys.argv) == 2 else 64)
elif __name__ == "__main__" and sys.argv[1] == "--bench":
    count, WIDTH, HEIGHT, out = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    NOISE = True
    np.random.seed(1)
    for kind in ["preview", "mosaic"]:
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        for index in range(count):
            write(os.path.join(out, kind, f"IMG_{index}.dng"), orientation=6 if index % 2 else 1,
                  preview=(WIDTH, HEIGHT) if kind == "preview" else None)
elif __name__ == "__main__":
    np.random.seed(1)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "mosaic.dng"))
    write(os.path.join(out, "mosaic-6.dng"), orientation=6)
    write(os.path.join(out, "preview-6.dng"), orientation=6, preview=(WIDTH, HEIGHT))
    write(os.path.join(out, "small-preview.dng"), preview=(300, 200))
    write(os.path.join(out, "letterbox.dng"), preview=(640, 480))
    tifffile.imwrite(os.path.join(out, "stray-ifd.NEF"), (scene(256, 171) * 255).astype(np.uint8), photometric="rgb",
                     extratags=[(271, "s", 0, "NIKON CORPORATION"), (272, "s", 0, "NIKON D700")])
    write_maker_tiff(os.path.join(out, "nikon-6.nef"), "NIKON CORPORATION", "NIKON D700", orientation=6)
    write_maker_tiff(os.path.join(out, "sony.arw"), "SONY", "ILCE-7M3")
    write_maker_tiff(os.path.join(out, "pentax.pef"), "PENTAX", "PENTAX K-5", preview=False)
    data = open(os.path.join(out, "preview-6.dng"), "rb").read()
    open(os.path.join(out, "truncated.dng"), "wb").write(data[: len(data) // 2])
    preview = tifffile.TiffFile(os.path.join(out, "preview-6.dng")).pages[0]
    cut = preview.dataoffsets[0] + preview.databytecounts[0] // 2
    open(os.path.join(out, "cut-in-preview.dng"), "wb").write(data[:cut])
