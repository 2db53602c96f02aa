#!/usr/bin/env python3
"""Gain-map fixtures, and the arithmetic check of a gain-map rendition, independently of thumbframe.

Usage:
  gainmap-check.py make DIR
      pq-16bit.png, hlg-16bit.png  an HDR scene (a dim-to-white gradient, patches at 1.5 to 4.5
                                   times SDR white, a soft highlight of 4.5) as 16-bit BT.2020 PQ
                                   and HLG code values, 2560 x 1600
      pq.avif                      the PQ one as a 10-bit AVIF (avifenc)
      reference-pq.npy, reference-hlg.npy
                                   the scene's BT.2100 rendering (PQ EOTF; HLG through a 1000
                                   cd/m2 display's OOTF) of the 10-bit code values a decoder sees,
                                   in linear BT.709 relative to SDR white (203 cd/m2), negatives
                                   clipped: block means on the GRID
  gainmap-check.py apple DIR
      apple.heic                   an iPhone-style HEIC of the same scene, 1280 x 800: an 8-bit SDR
                                   picture (the scene clipped at SDR white), an Apple HDR gain map
                                   as its auxiliary image (urn:com:apple:photo:2020:aux:hdrgainmap,
                                   half size, Rec. 709's curve of g = (HDR / SDR - 1) / (headroom - 1)),
                                   both turned by an irot of 270 degrees, and an EXIF MakerNote whose
                                   tags 33 and 48 give the headroom (Apple's formula: 2^2.2424);
                                   libheif's heif-enc writes both pictures, this script makes the
                                   second the first's auxiliary image (Debian's heif-enc 1.15
                                   cannot)
      reference-apple.npy          its HDR picture by Apple's formula, from the pictures and map
                                   before they were coded, turned upright, in linear sRGB: block means
  gainmap-check.py check RENDITION (--reference NPY | --source JPEG [ORIENTATION] | --apple PRIMARY.png MAP.png HEADROOM)
      Reads RENDITION's gain-map structure here (MPF, the XMP of both images, the ISO 21496-1
      boxes), decodes its SDR base and its map, recomposes the HDR picture with the metadata's own
      formula at full weight, and compares it with the source's HDR rendering in linear light, as
      block means on the GRID: a reference made by `make`, another gain-map JPEG recomposed the
      same way (--source, turned by its EXIF ORIENTATION 1, 3, 6 or 8), or an iPhone HEIC's primary picture and Apple gain map as heif-convert
      --with-aux writes them, composed with Apple's formula (HDR = SDR * (1 + (headroom - 1) * g),
      g the map in Rec. 709's curve; compared in luminance, the primary being Display P3).
      Prints one JSON object: the metadata, and for the HDR picture and for the SDR base alone,
      PSNR (dB, peak the reference's brightest block) and the mean relative luminance error over
      all blocks and over the highlights (blocks above SDR white).
  gainmap-check.py chromium DIR FILE...
      Headless Chromium decodes each FILE (a path below DIR, served over HTTP) as an <img>; prints
      JSON: per file its natural size, or null when Chromium could not decode it. Exit 77 when
      Chromium, its driver or Selenium is missing.
"""
import json
import os
import subprocess
import sys

import imagecodecs
import numpy as np

GRID = 40  # blocks across
Y709 = np.array([0.2126, 0.7152, 0.0722])
YP3 = np.array([0.2290, 0.6917, 0.0793])


def _fixtures():
    """The BT.2100 formulas of hdr-fixtures.py, the tone-mapping tests' fixtures."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("hdr_fixtures", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hdr-fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_hdr = _fixtures()
WHITE, TO_2020, TO_709 = _hdr.WHITE, _hdr.TO_2020, _hdr.TO_709
pq_oetf, pq_eotf, hlg_oetf, hlg_display = _hdr.pq_oetf, _hdr.pq_eotf, _hdr.hlg_oetf, _hdr.hlg_display


def srgb_to_linear(v):
    """sRGB's EOTF of values 0…1."""
    return _hdr.srgb_to_linear(v * 255.0)


def rec709_to_linear(v):
    return np.where(v < 0.081, v / 4.5, ((v + 0.099) / 1.099) ** (1 / 0.45))


def blocks(image, grid_w=GRID):
    """Block means of an H x W (x C) image on a grid GRID wide, as many tall as its aspect gives."""
    h, w = image.shape[:2]
    grid_h = max(1, round(grid_w * h / w))
    ys = np.linspace(0, h, grid_h + 1).round().astype(int)
    xs = np.linspace(0, w, grid_w + 1).round().astype(int)
    sums = np.add.reduceat(np.add.reduceat(image.astype(np.float64), ys[:-1], axis=0), xs[:-1], axis=1)
    counts = np.outer(np.diff(ys), np.diff(xs))
    return sums / (counts[..., None] if sums.ndim == 3 else counts)


def scene():
    """The HDR scene in linear BT.709, SDR white 1.0."""
    h, w = 1600, 2560
    x = np.linspace(0, 1, w)[None, :, None]
    y = np.linspace(0, 1, h)[:, None, None]
    image = (0.01 + 0.89 * x) * np.array([0.9, 1.0, 1.1]) * (0.8 + 0.2 * y)
    colours = [(1, 0.3, 0.3), (0.3, 1, 0.4), (0.35, 0.45, 1), (1, 1, 1), (1, 0.85, 0.4), (0.5, 0.9, 1)]
    for index, (colour, level) in enumerate(zip(colours, [1.5, 2, 2.5, 3, 3.5, 4.5])):
        top, left = 200 + (index // 3) * 600, 240 + (index % 3) * 560
        image[top:top + 400, left:left + 400] = np.array(colour) * level
    yy, xx = np.mgrid[0:h, 0:w]
    glow = np.exp(-(((xx - 2250) ** 2 + (yy - 1300) ** 2) / (2 * 120.0 ** 2)))
    return np.maximum(image, (4.5 * glow)[..., None])


def make(out):
    os.makedirs(out, exist_ok=True)
    linear2020 = scene() @ TO_2020.T
    pq = pq_oetf(linear2020 * WHITE)
    target = linear2020 * WHITE / 1000
    luminance = target @ np.array([0.2627, 0.6780, 0.0593])
    hlg = hlg_oetf(target / np.maximum(luminance, 1e-12)[..., None] ** (0.2 / 1.2))
    for name, signal in [("pq", pq), ("hlg", hlg)]:
        png = os.path.join(out, name + "-16bit.png")
        with open(png, "wb") as f:
            f.write(imagecodecs.png_encode(np.round(np.clip(signal, 0, 1) * 65535).astype(np.uint16)))
        # What a decoder sees: the 10-bit code values the AVIF and the HEIC hold.
        seen = np.round(np.clip(signal, 0, 1) * 1023) / 1023
        display = pq_eotf(seen) if name == "pq" else hlg_display(seen)
        np.save(os.path.join(out, f"reference-{name}.npy"), blocks(np.maximum((display / WHITE) @ TO_709.T, 0)))
    subprocess.run(["avifenc", "--depth", "10", "--cicp", "9/16/9", "--range", "full", "--min", "0", "--max", "4", "-y", "444",
                    os.path.join(out, "pq-16bit.png"), os.path.join(out, "pq.avif")], check=True, stdout=subprocess.DEVNULL)


def box(kind, payload, full=None):
    """An ISOBMFF box; FULL: (version, flags) of a full box."""
    head = b"" if full is None else bytes([full[0]]) + full[1].to_bytes(3, "big")
    return (8 + len(head) + len(payload)).to_bytes(4, "big") + kind + head + payload


def children(data, start, end):
    """(kind, start, end) of the boxes in data[start:end]."""
    found, at = [], start
    while at + 8 <= end:
        size = int.from_bytes(data[at:at + 4], "big")
        found.append((data[at + 4:at + 8], at, at + size))
        at += size
    return found


def apple_exif():
    """A big-endian EXIF block: IFD0 -> Exif IFD -> an Apple MakerNote with tags 0x21 and 0x30."""
    note_entries = [(0x0021, 1.2), (0x0030, 0.2)]  # HDRHeadroom >= 1, HDRGain > 0.01: 2.303 - 0.303 * 0.2 stops
    note = bytearray(b"Apple iOS\0" + b"\x00\x01" + b"MM" + len(note_entries).to_bytes(2, "big"))
    values_at = 16 + 12 * len(note_entries) + 4
    values = bytearray()
    for tag, value in note_entries:
        note += tag.to_bytes(2, "big") + (10).to_bytes(2, "big") + (1).to_bytes(4, "big") + (values_at + len(values)).to_bytes(4, "big")
        values += round(value * 10000).to_bytes(4, "big", signed=True) + (10000).to_bytes(4, "big")
    note += bytes(4) + values
    tiff = bytearray(b"MM\x00\x2a" + (8).to_bytes(4, "big"))
    # IFD0: Make, ExifIFD pointer.
    make = b"Apple\0"
    ifd0_end = 8 + 2 + 2 * 12 + 4
    exif_ifd = ifd0_end + len(make)
    tiff += (2).to_bytes(2, "big")
    tiff += (0x010F).to_bytes(2, "big") + (2).to_bytes(2, "big") + len(make).to_bytes(4, "big") + ifd0_end.to_bytes(4, "big")
    tiff += (0x8769).to_bytes(2, "big") + (4).to_bytes(2, "big") + (1).to_bytes(4, "big") + exif_ifd.to_bytes(4, "big")
    tiff += bytes(4) + make
    note_at = exif_ifd + 2 + 12 + 4
    tiff += (1).to_bytes(2, "big")
    tiff += (0x927C).to_bytes(2, "big") + (7).to_bytes(2, "big") + len(note).to_bytes(4, "big") + note_at.to_bytes(4, "big")
    tiff += bytes(4) + note
    return b"Exif\0\0" + bytes(tiff)


def apple(out):
    """apple.heic and reference-apple.npy (see the usage)."""
    os.makedirs(out, exist_ok=True)
    hdr = scene()[::2, ::2]  # 1280 x 800
    headroom = 2 ** (2.303 - 0.303 * 0.2)
    sdr = np.clip(hdr, 0, 1)
    primary = np.round(np.where(sdr <= 0.0031308, 12.92 * sdr, 1.055 * sdr ** (1 / 2.4) - 0.055) * 255).astype(np.uint8)
    sdr_seen = srgb_to_linear(primary / 255.0)
    y = lambda rgb: rgb @ Y709
    weight = np.clip((y(hdr) / np.maximum(y(sdr_seen), 1e-4) - 1) / (headroom - 1), 0, 1)
    half = weight.reshape(400, 2, 640, 2).mean(axis=(1, 3))
    coded = np.where(half < 0.018, 4.5 * half, 1.099 * half ** 0.45 - 0.099)
    jpeg = imagecodecs.jpeg8_encode(primary, level=97)
    exif = apple_exif()
    jpeg = jpeg[:2] + b"\xff\xe1" + (len(exif) + 2).to_bytes(2, "big") + exif + jpeg[2:]
    with open(os.path.join(out, "apple-primary.jpg"), "wb") as f:
        f.write(jpeg)
    with open(os.path.join(out, "apple-map.png"), "wb") as f:
        f.write(imagecodecs.png_encode(np.round(coded * 255).astype(np.uint8)))
    two = os.path.join(out, "apple-two.heic")
    subprocess.run(["heif-enc", "-q", "95", os.path.join(out, "apple-primary.jpg"), os.path.join(out, "apple-map.png"), "-o", two],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "apple.heic"), "wb") as f:
        f.write(make_auxiliary(open(two, "rb").read()))
    # The reference: Apple's formula over what was coded, the map at full size, turned as irot 3 turns.
    upsampled = upsample(rec709_to_linear(np.round(coded * 255) / 255), 800, 1280)
    reference = sdr_seen * (1 + (headroom - 1) * upsampled)[..., None]
    np.save(os.path.join(out, "reference-apple.npy"), blocks(np.rot90(reference, k=3)))


def make_auxiliary(data):
    """heif-enc's file of two pictures with the second made the first's Apple gain map: an auxC
    property and a hidden infe for it, an auxl reference to the primary, and an irot of 270
    degrees on both (as an iPhone shot held upright is stored); every size and iloc offset
    moved with the meta box."""
    top = children(data, 0, len(data))
    meta = next(b for b in top if b[0] == b"meta")
    inner = children(data, meta[1] + 12, meta[2])
    primary = int.from_bytes([data[s + 12:s + 14] for k, s, e in inner if k == b"pitm"][0], "big")
    parts = []
    map_id = None
    for kind, start, end in inner:
        body = data[start + 8:end]
        if kind == b"iinf":
            version = body[0]
            count_size = 2 if version == 0 else 4
            entries = children(body, 4 + count_size, len(body))
            rebuilt = b""
            for _, s, e in entries:
                infe = bytearray(body[s:e])
                item = int.from_bytes(infe[12:14], "big")
                if item != primary and infe[16:20] == b"hvc1" and map_id is None:
                    map_id = item
                    infe[11] |= 1  # hidden
                rebuilt += bytes(infe)
            parts.append(box(b"iinf", body[4:4 + count_size] + rebuilt, (version, int.from_bytes(body[1:4], "big"))))
        elif kind == b"iprp":
            ipco = next(c for c in children(data, start + 8, end) if c[0] == b"ipco")
            ipma = next(c for c in children(data, start + 8, end) if c[0] == b"ipma")
            properties = data[ipco[1] + 8:ipco[2]]
            count = len(children(properties, 0, len(properties)))
            aux = box(b"auxC", b"urn:com:apple:photo:2020:aux:hdrgainmap\0", (0, 0))
            irot = box(b"irot", bytes([3]))
            properties += aux + irot
            aux_index, irot_index = count + 1, count + 2
            table = data[ipma[1] + 8:ipma[2]]
            version, flags = table[0], int.from_bytes(table[1:4], "big")
            assert version == 0 and flags & 1 == 0, "an ipma of 16-bit items with 1-byte associations"
            at, rows = 8, []
            for _ in range(int.from_bytes(table[4:8], "big")):
                item, n = int.from_bytes(table[at:at + 2], "big"), table[at + 2]
                associations = list(table[at + 3:at + 3 + n])
                at += 3 + n
                if item == map_id:
                    associations += [0x80 | aux_index]
                if item in (primary, map_id):
                    associations += [0x80 | irot_index]
                rows.append(item.to_bytes(2, "big") + bytes([len(associations)]) + bytes(associations))
            ipma_box = box(b"ipma", len(rows).to_bytes(4, "big") + b"".join(rows), (0, 0))
            parts.append(box(b"iprp", box(b"ipco", properties) + ipma_box))
        elif kind == b"iref":
            auxl = box(b"auxl", map_id.to_bytes(2, "big") + (1).to_bytes(2, "big") + primary.to_bytes(2, "big"))
            parts.append(box(b"iref", body[4:] + auxl, (body[0], 0)))
        else:
            parts.append(data[start:end])
    if not any(k == b"iref" for k, _, _ in inner):
        parts.append(box(b"iref", box(b"auxl", map_id.to_bytes(2, "big") + (1).to_bytes(2, "big") + primary.to_bytes(2, "big")), (0, 0)))
    new_meta = box(b"meta", b"".join(parts), (0, 0))
    delta = len(new_meta) - (meta[2] - meta[1])
    # iloc: construction method 0 offsets are the file's; everything after meta moved by delta.
    out = bytearray()
    for kind, start, end in top:
        out += new_meta if kind == b"meta" else data[start:end]
    meta_at = next(s for k, s, e in top if k == b"meta")
    iloc = next(c for c in children(out, meta_at + 12, meta_at + len(new_meta)) if c[0] == b"iloc")
    at = iloc[1] + 8
    version = out[at]
    offset_size, length_size = out[at + 4] >> 4, out[at + 4] & 15
    base_size, index_size = out[at + 5] >> 4, (out[at + 5] & 15) if version in (1, 2) else 0
    at += 6
    id_size = 4 if version == 2 else 2
    count = int.from_bytes(out[at:at + (4 if version == 2 else 2)], "big")
    at += 4 if version == 2 else 2
    for _ in range(count):
        at += id_size
        method = 0
        if version in (1, 2):
            method = int.from_bytes(out[at:at + 2], "big") & 15
            at += 2
        at += 2  # data_reference_index
        def shift(position, size):
            if size and method == 0:
                value = int.from_bytes(out[position:position + size], "big")
                out[position:position + size] = (value + delta).to_bytes(size, "big")
        base_at = at
        at += base_size
        extents = int.from_bytes(out[at:at + 2], "big")
        at += 2
        if base_size and int.from_bytes(out[base_at:base_at + base_size], "big"):
            shift(base_at, base_size)
            at += extents * (index_size + offset_size + length_size)
            continue
        for _ in range(extents):
            at += index_size
            shift(at, offset_size)
            at += offset_size + length_size
    return bytes(out)


def segments(data, start):
    """(marker, body) of a JPEG's segments from its SOI at `start` to its first SOS."""
    assert data[start:start + 2] == b"\xff\xd8", "not a JPEG"
    found, at = [], start + 2
    while at + 4 <= len(data) and data[at] == 0xFF and data[at + 1] not in (0xDA, 0xD9):
        length = int.from_bytes(data[at + 2:at + 4], "big")
        found.append((data[at + 1], at + 4, data[at + 4:at + 2 + length]))
        at += 2 + length
    return found


def xmp_numbers(text):
    def value(name):
        key = f'hdrgm:{name}="'
        at = text.find(key)
        return None if at < 0 else text[at + len(key):text.index('"', at + len(key))]
    names = ["Version", "GainMapMin", "GainMapMax", "Gamma", "OffsetSDR", "OffsetHDR", "HDRCapacityMin", "HDRCapacityMax",
             "BaseRenditionIsHDR"]
    return {name: value(name) for name in names if value(name) is not None}


def iso_numbers(box):
    assert int.from_bytes(box[0:2], "big") == 0, "ISO 21496-1 minimum version is not 0"
    flags = box[4]
    assert flags & 0x08 == 0, "the common-denominator form Skia cannot read"
    values, at = [], 5
    while at + 8 <= len(box):
        numerator = int.from_bytes(box[at:at + 4], "big", signed=True)
        values.append(numerator / int.from_bytes(box[at + 4:at + 8], "big"))
        at += 8
    keys = ["baseHeadroom", "alternateHeadroom", "gainMapMin", "gainMapMax", "gamma", "baseOffset", "alternateOffset"]
    return dict(zip(keys, values), multichannel=bool(flags & 0x80), useBaseColourSpace=bool(flags & 0x40))


def read(path):
    """The rendition's structure, base and map pixels, and the numbers of its map."""
    data = open(path, "rb").read()
    info = {"bytes": len(data)}
    mpf = None
    for marker, offset, body in segments(data, 0):
        if marker == 0xE1 and body.startswith(b"http://ns.adobe.com/xap/1.0/\0"):
            text = body[29:].decode()
            info["baseXMP"] = xmp_numbers(text)
            at = text.find('Item:Semantic="GainMap"')
            info["directoryLength"] = int(text[at:].split('Item:Length="')[1].split('"')[0]) if at >= 0 else None
        elif marker == 0xE2 and body.startswith(b"urn:iso:std:iso:ts:21496:-1\0"):
            info["baseISOVersion"] = body[28:].hex()
        elif marker == 0xE2 and body.startswith(b"MPF\0"):
            tiff = offset + 4
            little = data[tiff:tiff + 2] == b"II"
            number = lambda at, n: int.from_bytes(data[tiff + at:tiff + at + n], "little" if little else "big")
            ifd = number(4, 4)
            for index in range(number(ifd, 2)):
                entry = ifd + 2 + index * 12
                if number(entry, 2) == 0xB002:
                    first = number(entry + 8, 4)
                    mpf = [(number(first + 16 * i + 4, 4), number(first + 16 * i + 8, 4)) for i in range(number(entry + 4, 4) // 16)]
            info["mpf"] = mpf
    assert mpf and len(mpf) == 2, "no MPF index of two images"
    primary_length, (map_length, map_offset) = mpf[0][0], mpf[1]
    map_start = [o for m, o, b in segments(data, 0) if m == 0xE2 and b.startswith(b"MPF\0")][0] + 4 + map_offset
    info["mapStartsAfterBase"] = map_start == primary_length and map_start + map_length == len(data)
    for marker, offset, body in segments(data, map_start):
        if marker == 0xE1 and body.startswith(b"http://ns.adobe.com/xap/1.0/\0"):
            info["xmp"] = xmp_numbers(body[29:].decode())
        elif marker == 0xE2 and body.startswith(b"urn:iso:std:iso:ts:21496:-1\0"):
            info["iso"] = iso_numbers(body[28:])
    base = imagecodecs.jpeg8_decode(data[:primary_length]).astype(np.float64) / 255
    gain = imagecodecs.jpeg8_decode(data[map_start:map_start + map_length]).astype(np.float64) / 255
    return info, base, gain


def upsample(image, h, w):
    """Bilinear, pixel centres aligned (as browsers scale a map to its base)."""
    ih, iw = image.shape[:2]
    ys = np.clip((np.arange(h) + 0.5) * ih / h - 0.5, 0, ih - 1)
    xs = np.clip((np.arange(w) + 0.5) * iw / w - 0.5, 0, iw - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, ih - 1), np.minimum(x0 + 1, iw - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    if image.ndim == 3:
        fy, fx = fy[..., None], fx[..., None]
    top = image[y0][:, x0] * (1 - fx) + image[y0][:, x1] * fx
    bottom = image[y1][:, x0] * (1 - fx) + image[y1][:, x1] * fx
    return top * (1 - fy) + bottom * fy


def recompose(path):
    """The HDR picture of a gain-map JPEG in its base's linear light, at full weight (ISO's numbers)."""
    info, base, gain = read(path)
    iso = info["iso"]
    sdr = srgb_to_linear(base)
    normalized = upsample(gain, *sdr.shape[:2]) ** (1 / iso["gamma"])
    stops = iso["gainMapMin"] * (1 - normalized) + iso["gainMapMax"] * normalized
    if stops.ndim == 2:
        stops = stops[..., None]
    hdr = (sdr + iso["baseOffset"]) * 2 ** stops - iso["alternateOffset"]
    return info, sdr, hdr


def compare(picture, reference, luminance):
    """PSNR and relative luminance errors of block means `picture` against `reference`."""
    peak = reference.max()
    psnr = 10 * np.log10(peak ** 2 / max(np.mean((picture - reference) ** 2), 1e-20))
    y, y_ref = picture @ luminance if picture.ndim == 3 else picture, reference @ luminance if reference.ndim == 3 else reference
    relative = np.abs(y - y_ref) / np.maximum(y_ref, 0.01)
    bright = y_ref > 1
    return {"psnr": round(float(psnr), 2), "relative": round(float(relative.mean()), 4),
            "highlights": round(float(relative[bright].mean()), 4) if bright.any() else None,
            "highlightBlocks": int(bright.sum())}


def check(rendition, mode, args):
    info, sdr, hdr = recompose(rendition)
    if mode == "--reference":
        reference, luminance = np.load(args[0]), Y709
        ours, base = blocks(hdr), blocks(sdr)
    elif mode == "--source":
        _, _, source = recompose(args[0])
        # ORIENTATION: the source's EXIF orientation (1, 3, 6 or 8), which turns base and map alike.
        turns = {"1": 0, "3": 2, "6": -1, "8": 1}[args[1] if len(args) > 1 else "1"]
        reference, luminance = blocks(np.rot90(source, k=turns)), Y709
        ours, base = blocks(hdr), blocks(sdr)
    elif mode == "--apple":
        primary = srgb_to_linear(imagecodecs.imread(args[0])[..., :3].astype(np.float64) / 255)
        weight = rec709_to_linear(imagecodecs.imread(args[1]).astype(np.float64) / 255)
        weight = weight[..., 0] if weight.ndim == 3 else weight
        headroom = float(args[2])
        source = primary * (1 + (headroom - 1) * upsample(weight, *primary.shape[:2]))[..., None]
        # Display P3 against sRGB: luminance, which the conversion between them keeps.
        reference, luminance = blocks(source @ YP3), None
        ours, base = blocks(hdr @ Y709), blocks(sdr @ Y709)
    else:
        raise SystemExit(__doc__)
    if luminance is None:
        luminance = np.array([1.0])
        reference, ours, base = reference[..., None], ours[..., None], base[..., None]
    print(json.dumps({"metadata": info, "hdr": compare(ours, reference, luminance), "sdr": compare(base, reference, luminance)}))


def chromium(directory, files):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import browsertest
    base, server = browsertest.serve(os.path.abspath(directory))
    driver = browsertest.browser(800, 600)
    try:
        driver.get(base + "/")
        decoded = {}
        for name in files:
            decoded[name] = driver.execute_async_script("""
                const done = arguments[arguments.length - 1], image = new Image();
                image.src = arguments[0];
                image.decode().then(() => done([image.naturalWidth, image.naturalHeight]), () => done(null));""", base + "/" + name)
        print(json.dumps(decoded))
    finally:
        driver.quit()
        server.shutdown()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "apple":
        apple(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "chromium":
        chromium(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        print(__doc__)
        sys.exit(0 if "--help" in sys.argv or "-h" in sys.argv else 64)
