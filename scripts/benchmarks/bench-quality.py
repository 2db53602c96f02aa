#!/usr/bin/env python3
"""The quality half of scripts/bench: how close each thumbnail is to an ideal one.

The reference for a thumbnail of W x H is the original decoded at full size (no
shrink-on-load), turned upright, and resized by Lanczos3 alone (libvips' resize with a reducing
gap of 0: no box pre-shrink) to exactly W x H, in floating point (the ideal values, not rounded
to 8 bits by the integer arithmetic of any peer); a cover thumbnail is scaled to cover and
cropped at the centre. Each peer's thumbnail of the same recipe is compared with the reference made
for its own size (peers round sizes differently), by PSNR over RGB and SSIM (Gaussian window
sigma 1.5, on luma). Every peer's file is a JPEG of the same quality, so encoding noise weighs
on all alike.

Usage: python3 bench-quality.py MANIFEST PHOTOS VIPSTHUMBNAIL_DIR PILLOW_DIR WORK_DIR JOBS
Prints one table: per peer and recipe, mean and worst PSNR/SSIM, and on how many images
thumbframe is worse than vipsthumbnail and than Pillow (by more than 0.05 dB / 0.0005 SSIM, the
noise of the metric), over the images where both made the thumbnail at the same size.
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before the numerical modules are imported
    print(__doc__.strip())
    sys.exit(0)

import json
import os
import subprocess
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image


def load(path):
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.float64)


def psnr(a, b):
    mse = np.mean((a - b) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(255.0**2 / mse)


def blur(x, sigma=1.5):
    radius = int(3 * sigma + 0.5)
    k = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    k /= k.sum()
    x = np.apply_along_axis(lambda r: np.convolve(r, k, mode="valid"), 1, x)
    return np.apply_along_axis(lambda c: np.convolve(c, k, mode="valid"), 0, x)


def ssim(a, b):
    luma = np.array([0.299, 0.587, 0.114])
    x, y = a @ luma, b @ luma
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = blur(x), blur(y)
    sxx, syy, sxy = blur(x * x) - mx * mx, blur(y * y) - my * my, blur(x * y) - mx * my
    s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    return float(s.mean())


def reference(full, width, height, cover, out):
    """Lanczos3 alone from the full decode to exactly width x height (cover: then the centre), in
    floating point: the ideal values, not rounded to 8 bits by any peer's integer arithmetic."""
    fw, fh = (int(v) for v in subprocess.check_output(
        ["vipsheader", "-f", "width", full]).split() + subprocess.check_output(["vipsheader", "-f", "height", full]).split())
    if cover:
        scale = max(width / fw, height / fh)
        hs = vs = scale
    else:
        hs, vs = width / fw, height / fh
    resized = out + ".resized.v"
    subprocess.check_call(["vips", "resize", full, resized, str(hs), "--vscale", str(vs),
                           "--kernel", "lanczos3", "--gap", "0"])
    rw = int(subprocess.check_output(["vipsheader", "-f", "width", resized]))
    rh = int(subprocess.check_output(["vipsheader", "-f", "height", resized]))
    bands = int(subprocess.check_output(["vipsheader", "-f", "bands", resized]))
    cw, ch = min(width, rw), min(height, rh)
    area = out + ".area.v"
    subprocess.check_call(["vips", "extract_area", resized, area, str((rw - cw) // 2), str((rh - ch) // 2), str(cw), str(ch)])
    subprocess.check_call(["vips", "rawsave", area, out])
    pixels = np.fromfile(out, dtype=np.float32).astype(np.float64).reshape(ch, cw, bands)
    for path in (resized, area, out):
        os.remove(path)
    pixels = np.clip(pixels, 0, 255)
    return np.repeat(pixels, 3, axis=2) if bands == 1 else pixels[:, :, :3]


def measure(job):
    source, work, peers = job
    key = os.path.basename(source)
    upright = f"{work}/{key}.upright.v"
    full = f"{work}/{key}.full.v"
    subprocess.check_call(["vips", "autorot", source, upright])
    subprocess.check_call(["vips", "cast", upright, full, "float"])
    os.remove(upright)
    rows = []
    references = {}  # peers mostly agree on sizes: one reference per size
    for peer, recipe, path in peers:
        if not os.path.exists(path):
            continue
        image = load(path)
        h, w = image.shape[:2]
        if (w, h, recipe) not in references:
            references[(w, h, recipe)] = reference(full, w, h, recipe == "grid", f"{work}/{key}.{w}x{h}.{recipe}.raw")
        ref = references[(w, h, recipe)]
        if ref.shape != image.shape:  # rounding of the reference itself
            h, w = min(h, ref.shape[0]), min(w, ref.shape[1])
            ref, image = ref[:h, :w], image[:h, :w]
        rows.append((key, peer, recipe, psnr(image, ref), ssim(image, ref), (w, h)))
    os.remove(full)
    return rows


def main():
    if len(sys.argv) < 7 or sys.argv[1] in ("-h", "--help"):
        asked = sys.argv[1:2] in (["-h"], ["--help"])
        (sys.stdout if asked else sys.stderr).write(__doc__)
        sys.exit(0 if asked else 64)
    manifest_path, photos, vt, pil, work, jobs = sys.argv[1:7]
    os.makedirs(work, exist_ok=True)
    root = os.path.dirname(manifest_path)
    manifest = json.load(open(manifest_path))
    jobs_list = []
    for section in manifest["sections"]:
        for page in section["pages"]:
            for item in json.load(open(os.path.join(root, page["path"])))["items"]:
                name = os.path.splitext(os.path.basename(item["path"]))[0]
                peers = []
                for recipe in ("grid", "preview"):
                    peers.append(("thumbframe", recipe, os.path.join(root, item["thumbnails"][recipe]["path"])))
                    peers.append(("vipsthumbnail", recipe, f"{vt}/{name}-{recipe}.jpg"))
                    if pil:
                        peers.append(("Pillow", recipe, f"{pil}/{name}-{recipe}.jpg"))
                jobs_list.append((os.path.join(photos, item["path"]), work, peers))
    with Pool(int(jobs)) as pool:
        rows = [row for result in pool.map(measure, jobs_list, chunksize=1) for row in result]

    by = {}
    for key, peer, recipe, p, s, size in rows:
        by.setdefault((peer, recipe), {})[key] = (p, s, size)
    print(f"{'quality vs full-decode Lanczos3':34} {'PSNR dB mean':>12} {'worst':>7} {'SSIM mean':>10} {'worst':>7}")
    for (peer, recipe), values in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0] != "thumbframe", kv[0][0])):
        ps = [v[0] for v in values.values()]
        ss = [v[1] for v in values.values()]
        print(f"{peer + ' ' + recipe:34} {np.mean(ps):12.2f} {min(ps):7.2f} {np.mean(ss):10.4f} {min(ss):7.4f}")
    for recipe, peer in [(r, p) for r in ("grid", "preview") for p in ("vipsthumbnail", "Pillow")]:
        ours, theirs = by.get(("thumbframe", recipe), {}), by.get((peer, recipe), {})
        # Only thumbnails of the same size compare: thumbframe's previews of long images are 1080
        # wide (../shared/SPEC.md), vipsthumbnail's fit 1280 high, and a larger JPEG of finer detail scores lower.
        both = sorted(set(ours) & set(theirs))
        common = [k for k in both if all(abs(a - b) <= 2 for a, b in zip(ours[k][2], theirs[k][2]))]
        if not common:
            continue
        worse_p = [k for k in common if ours[k][0] < theirs[k][0] - 0.05]
        worse_s = [k for k in common if ours[k][1] < theirs[k][1] - 0.0005]
        delta = [ours[k][0] - theirs[k][0] for k in common]
        print(f"thumbframe {recipe} vs {peer}: {len(common)} images of the same size"
              f"{f' ({len(both) - len(common)} of other sizes left out)' if len(both) > len(common) else ''}, PSNR worse on {len(worse_p)}, "
              f"SSIM worse on {len(worse_s)}; PSNR difference min {min(delta):+.2f} dB, mean {np.mean(delta):+.2f} dB"
              + (f"  (worse: {', '.join(sorted(set(worse_p + worse_s))[:5])})" if worse_p or worse_s else ""))


if __name__ == "__main__":
    main()
