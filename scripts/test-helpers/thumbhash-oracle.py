#!/usr/bin/env python3
"""ThumbHash oracle for the tests: PyPI's thumbhash-python, an implementation independent of
thumbframe's Swift one.

Usage: python3 thumbhash-oracle.py CASES.json
CASES.json: [{"width": W, "height": H, "rgba": "<base64>", "hash": "<base64 of thumbframe's hash>"}]
Prints JSON: for each case the oracle's hash of the same pixels, and the oracle's decode of
thumbframe's hash ({"width", "height", "rgba"} base64), so the test can compare both ways.
"""
import sys

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

import base64
import json
import sys

from thumbhash.decode import thumbhash_to_rgba
from thumbhash.encode import rgba_to_thumbhash

out = []
for case in json.load(open(sys.argv[1])):
    rgba = base64.b64decode(case["rgba"])
    ours = base64.b64decode(case["hash"])
    theirs = bytes(rgba_to_thumbhash(case["width"], case["height"], list(rgba)))
    w, h, pixels = thumbhash_to_rgba(ours)
    out.append({
        "hash": base64.b64encode(theirs).decode(),
        "decoded": {"width": w, "height": h, "rgba": base64.b64encode(bytes(pixels)).decode()},
    })
json.dump(out, sys.stdout)
