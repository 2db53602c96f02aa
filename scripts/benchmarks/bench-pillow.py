#!/usr/bin/env python3
"""The Pillow peer of scripts/bench: each file decoded once in draft mode (libjpeg's DCT
scaling, like libvips' shrink-on-load), upright by its EXIF orientation, and both default
thumbnails saved from that decode: grid 256x256 cover q80 and preview 1280x1280 fit q82.
One process per job. Usage: python3 bench-pillow.py JOBS OUT_DIR FILE..."""
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

import os
import sys
from multiprocessing import Pool

from PIL import Image, ImageOps


def work(job):
    path, out = job
    name = os.path.splitext(os.path.basename(path))[0]
    with Image.open(path) as image:
        # The grid cell needs the short side at 256 or more, the preview the long side at 1280.
        width, height = image.size
        scale = min(max(width, height) / 1280, min(width, height) / 256)
        if scale > 1:
            image.draft("RGB", (int(width / scale), int(height / scale)))
        image = ImageOps.exif_transpose(image).convert("RGB")
        ImageOps.fit(image, (256, 256), Image.Resampling.LANCZOS).save(f"{out}/{name}-grid.jpg", quality=80)
        image.thumbnail((1280, 1280), Image.Resampling.LANCZOS)
        image.save(f"{out}/{name}-preview.jpg", quality=82)


if __name__ == "__main__":
    jobs, out, files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    with Pool(jobs) as pool:
        pool.map(work, [(f, out) for f in files], chunksize=4)
