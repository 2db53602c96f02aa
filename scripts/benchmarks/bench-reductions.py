#!/usr/bin/env python3
"""The reduction sweep of scripts/bench: a zone plate (every frequency up to Nyquist) of 4096 x 4096,
as PNG and as JPEG q95, reduced by 2, 3, 4.37, 8 and 13 — by thumbframe (one build, one `fit`
recipe per factor, all from one decode), by vipsthumbnail (one run per factor) and by Pillow
(`thumbnail` with `reducing_gap=3` after a draft decode, one per factor) — each compared with
the floating-point Lanczos3 of the full decode (bench-quality.py's reference) by PSNR and SSIM.
Every thumbnail is a JPEG q100 without chroma subsampling, so encoding noise weighs little and alike.

Usage: python3 bench-reductions.py THUMBFRAME WORK_DIR JOBS
Prints one row per factor and source format, and the factors where thumbframe is worse than a
peer by more than 0.05 dB.
"""
import sys

if len(sys.argv) < 4 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

import os
import shutil
import subprocess
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module

quality = import_module("bench-quality")

SIDE = 4096
FACTORS = {"x2": 2, "x3": 3, "x4_37": 4.37, "x8": 8, "x13": 13}


def plates(directory):
    os.makedirs(directory, exist_ok=True)
    done = os.path.join(directory, ".done")
    if os.path.exists(done):
        return
    z, z8 = f"{directory}/z.v", f"{directory}/z8.v"
    subprocess.check_call(["vips", "zone", z, str(SIDE), str(SIDE)])
    subprocess.check_call(["vips", "linear", z, z8, "127.5", "127.5", "--uchar"])
    subprocess.check_call(["vips", "copy", z8, f"{directory}/zone-png.png", "--interpretation", "b-w"])
    subprocess.check_call(["vips", "copy", f"{directory}/zone-png.png", f"{directory}/zone-jpg.jpg[Q=95]"])
    os.remove(z)
    os.remove(z8)
    open(done, "w").close()


def pillow(job):
    source, out, name, side = job
    with Image.open(source) as image:
        image.draft("RGB", (side, side))
        image = image.convert("RGB")
        image.thumbnail((side, side), Image.Resampling.LANCZOS, reducing_gap=3.0)
        image.save(f"{out}/{os.path.splitext(os.path.basename(source))[0]}-{name}.jpg", quality=100, subsampling=0)


def main():
    thumbframe, work, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sources = f"{work}/reductions"
    plates(sources)
    sides = {name: round(SIDE / factor) for name, factor in FACTORS.items()}
    out, vt, pil = f"{work}/reductions-thumbframe", f"{work}/reductions-vipsthumbnail", f"{work}/reductions-pillow"
    for directory in (out, vt, pil):
        shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(vt)
    os.makedirs(pil)
    recipes = [arg for name, side in sides.items() for arg in ("--thumb", f"{name}={side}x{side}:fit:jpeg:q100")]
    subprocess.check_call([thumbframe, "build", sources, "--out", out, "--quiet", *recipes])
    files = [f"{sources}/zone-png.png", f"{sources}/zone-jpg.jpg"]
    for name, side in sides.items():
        for source in files:
            subprocess.check_call(["vipsthumbnail", "-s", f"{side}x{side}", "-o", f"{vt}/%s-{name}.jpg[Q=100,strip]", source])
    with Pool(jobs) as pool:
        pool.map(pillow, [(source, pil, name, side) for name, side in sides.items() for source in files])

    import json
    manifest = json.load(open(f"{out}/manifest.json"))
    items = [item for section in manifest["sections"] for page in section["pages"]
             for item in json.load(open(os.path.join(out, page["path"])))["items"]]
    measure_jobs = []
    for item in items:
        stem = os.path.splitext(os.path.basename(item["path"]))[0]
        peers = []
        for name in sides:
            peers.append(("thumbframe", name, os.path.join(out, item["thumbnails"][name]["path"])))
            peers.append(("vipsthumbnail", name, f"{vt}/{stem}-{name}.jpg"))
            peers.append(("Pillow", name, f"{pil}/{stem}-{name}.jpg"))
        measure_jobs.append((os.path.join(sources, item["path"]), f"{work}/reductions-work", peers))
    os.makedirs(f"{work}/reductions-work", exist_ok=True)
    with Pool(jobs) as pool:
        rows = [row for result in pool.map(quality.measure, measure_jobs, chunksize=1) for row in result]
    table = {(key, peer, name): (p, s) for key, peer, name, p, s, _ in rows}
    print(f"{'zone plate ' + str(SIDE) + ' px, PSNR dB / SSIM':40} {'thumbframe':>16} {'vipsthumbnail':>16} {'Pillow (gap 3)':>16}")
    worse = []
    for key in sorted({k for k, _, _ in table}):
        for name, factor in FACTORS.items():
            cells = [table.get((key, peer, name)) for peer in ("thumbframe", "vipsthumbnail", "Pillow")]
            text = ["" if c is None else f"{c[0]:6.2f} / {c[1]:.4f}" for c in cells]
            print(f"{key + ' reduced ' + str(factor) + 'x':40} {text[0]:>16} {text[1]:>16} {text[2]:>16}")
            ours = cells[0]
            for peer, theirs in zip(("vipsthumbnail", "Pillow"), cells[1:]):
                if ours and theirs and ours[0] < theirs[0] - 0.05:
                    worse.append(f"{key} {factor}x vs {peer} ({ours[0] - theirs[0]:+.2f} dB)")
    print("thumbframe worse than a peer: " + (", ".join(worse) if worse else "nowhere"))


if __name__ == "__main__":
    main()
