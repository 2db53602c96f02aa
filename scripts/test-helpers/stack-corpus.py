#!/usr/bin/env python3
"""A library of bursts and their neighbours, made from real photos, to measure `--stacks`.

    stack-corpus.py CORPUS_DIR OUT_DIR      writes OUT_DIR/library/*.jpg and OUT_DIR/truth.json
    stack-corpus.py --distances INDEX TRUTH prints the likeness distances within and across bursts

Every photo has one camera (Make/Model) and a capture time on one day. Half the real photos of
CORPUS_DIR (../shared/corpus/exif-samples/jpg) become bursts of six frames 0.4 s apart, each
frame cropped at another offset (up to 4 % of the side), exposed otherwise (0.78-1.2 x), one of
them blurred, re-encoded at quality 70-95. The other half, and a flat grey picture, are
unrelated photos taken in the same seconds as the bursts: one in the middle of a burst, one
just after. One unrelated photo has a byte-identical copy. truth.json maps each file name to
its burst (`burst-N`), `copy-N` for the copy pair, or null.
"""
import io
import json
import os
import sqlite3
import sys

import numpy as np
from PIL import Image, ImageFilter

MAKE, MODEL = "thumbframe", "stack-corpus"
EXPOSURES = [1.0, 0.85, 1.2, 0.92, 1.1, 0.78]
QUALITIES = [92, 80, 70, 88, 75, 95]
OFFSETS = [(0, 0), (0.01, 0.004), (0.02, 0.01), (0.028, 0.02), (0.035, 0.028), (0.04, 0.036)]


def sources(corpus):
    found = []
    for root, _, names in os.walk(corpus):
        for name in names:
            if not name.lower().endswith((".jpg", ".jpeg")):
                continue
            path = os.path.join(root, name)
            try:
                with Image.open(path) as image:
                    image.load()
                    if image.width >= 640 and image.height >= 480 and image.mode in ("RGB", "L"):
                        found.append(path)
            except Exception:
                continue
    # One picture of each scene: the orientation samples are one photo eight times.
    found = [p for p in sorted(found) if "/orientation/" not in p and not p.endswith("_YES.jpg")]
    return found


def exif(seconds):
    """EXIF with the camera and DateTimeOriginal + SubSecTimeOriginal for `seconds` after 10:00."""
    block = Image.Exif()
    block[0x010F] = MAKE
    block[0x0110] = MODEL
    whole = int(seconds)
    stamp = "2024:05:01 %02d:%02d:%02d" % (10 + whole // 3600, whole // 60 % 60, whole % 60)
    block[0x8769] = {0x9003: stamp, 0x9291: "%03d" % round((seconds - whole) * 1000)}
    return block.tobytes()


def save(image, path, seconds, quality=90):
    image.convert("RGB").save(path, "JPEG", quality=quality, exif=exif(seconds))


def frame(base, number):
    width, height = base.size
    dx, dy = OFFSETS[number]
    box = (round(dx * width), round(dy * height), round(dx * width + 0.92 * width), round(dy * height + 0.92 * height))
    image = base.crop(box)
    pixels = np.asarray(image, dtype=np.float32) * EXPOSURES[number]
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    if number == 3:
        image = image.filter(ImageFilter.GaussianBlur(2))
    return image


def make(corpus, out):
    library = os.path.join(out, "library")
    os.makedirs(library, exist_ok=True)
    photos = sources(corpus)
    bursts, singles = photos[0::2], photos[1::2]
    truth = {}
    for number, path in enumerate(bursts):
        with Image.open(path) as opened:
            base = opened.convert("RGB")
        base.thumbnail((1024, 1024))
        start = 60 * number
        for k in range(6):
            name = "burst%02d_%d.jpg" % (number, k)
            save(frame(base, k), os.path.join(library, name), start + 0.4 * k, QUALITIES[k])
            truth[name] = "burst-%d" % number
        # Unrelated photos of the same seconds: one amid the burst, one just after.
        for slot, at in ((0, 1.0), (1, 3.0)):
            index = 2 * number + slot
            if index >= len(singles):
                continue
            with Image.open(singles[index]) as opened:
                other = opened.convert("RGB")
            other.thumbnail((1024, 1024))
            name = "other%02d.jpg" % index
            save(other, os.path.join(library, name), start + at)
            truth[name] = None
    grey = Image.new("RGB", (1024, 768), (128, 128, 128))
    save(grey, os.path.join(library, "grey.jpg"), 0.6)
    truth["grey.jpg"] = None
    # A byte-identical copy of an unrelated photo.
    first = sorted(n for n in truth if n.startswith("other"))[0]
    with open(os.path.join(library, first), "rb") as f:
        data = f.read()
    with open(os.path.join(library, "copy-of-" + first), "wb") as f:
        f.write(data)
    truth[first] = truth["copy-of-" + first] = "copy-0"
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


def distances(index, truth_path):
    """Likeness distances (of 128 bits): between consecutive frames of a burst, within bursts, and
    between photos of different scenes (flat pictures, alike to none, left out)."""
    truth = json.load(open(truth_path))
    rows = sqlite3.connect(index).execute("SELECT path, evidence FROM files WHERE evidence IS NOT NULL").fetchall()
    hashes = {}
    for path, evidence in rows:
        parts = evidence.split(" ")
        if parts[7] != "-" and int(parts[11]) >= 32:  # Likeness.minimumDetail: flat pictures are alike to none
            hashes[bytes(path).decode().split("/")[-1]] = (int(parts[7], 16), int(parts[8], 16))
    same, other = [], []
    names = sorted(hashes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = bin(hashes[a][0] ^ hashes[b][0]).count("1") + bin(hashes[a][1] ^ hashes[b][1]).count("1")
            (same if truth.get(a) is not None and truth.get(a) == truth.get(b) else other).append(d)
    consecutive = [d for n in range(100) for k in range(5)
                   for a, b in [("burst%02d_%d.jpg" % (n, k), "burst%02d_%d.jpg" % (n, k + 1))] if a in hashes and b in hashes
                   for d in [bin(hashes[a][0] ^ hashes[b][0]).count("1") + bin(hashes[a][1] ^ hashes[b][1]).count("1")]]
    print("consecutive frames of a burst: max %d, n %d" % (max(consecutive), len(consecutive)))
    print("within bursts: max %d, mean %.1f, n %d" % (max(same), sum(same) / len(same), len(same)))
    print("across scenes: min %d, mean %.1f, n %d" % (min(other), sum(other) / len(other), len(other)))
    print("within sorted:", sorted(same)[-12:])
    print("across sorted:", sorted(other)[:12])


if __name__ == "__main__":
    if sys.argv[1] == "--distances":
        distances(sys.argv[2], sys.argv[3])
    else:
        make(sys.argv[1], sys.argv[2])
