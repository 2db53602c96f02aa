#!/usr/bin/env python3
"""What the web viewer's first phone screen costs over HTTP: requests and bytes until every cell
in view has its image, in headless Chromium at 390x844 (scale 3, as a phone).

Usage: python3 viewer-bytes.py OUT_DIR
OUT_DIR holds a --viewer build. Prints one line: requests, bytes by kind (page, manifest, pages,
thumbnails), and which thumbnails the cells loaded, by recipe. A measurement for the README, not
a test (the browser tests assert what must hold).
"""
import sys

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

# browsertest, the browser tests' harness, is in scripts/test-helpers.
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test-helpers"))

import json
import os
import sys
from collections import Counter

from browsertest import browser, serve, wait

out_dir = os.path.abspath(sys.argv[1])
base, server = serve(out_dir)
recipes = {}
manifest = json.load(open(os.path.join(out_dir, "manifest.json")))
for section in manifest["sections"]:
    for page in section["pages"]:
        for item in json.load(open(os.path.join(out_dir, page["path"])))["items"]:
            for name, thumbnail in item["thumbnails"].items():
                recipes["/" + thumbnail["path"]] = name
driver = browser(390, 844)
try:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
    driver.get(base + "index.html")
    wait(driver, "return document.body.dataset.ready")
    cells = wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => c.getBoundingClientRect().top < innerHeight);
        return cells.length > 0 && cells.every((c) => c.querySelector('img').complete && c.querySelector('img').naturalWidth > 0) && cells.length""", 60)
finally:
    driver.quit()
server.shutdown()
kinds = Counter()
for path, size in server.requests:
    kind = ("thumbnails" if path.startswith("/thumbs/") else "pages" if path.startswith("/pages/")
            else "manifest" if path == "/manifest.json" else "page, script, style")
    kinds[kind] += size
loaded = Counter(recipes.get(path, "?") for path, _ in server.requests if path.startswith("/thumbs/"))
total = sum(size for _, size in server.requests)
print(f"{manifest['itemCount']} items: first phone screen ({cells} cells) complete after {len(server.requests)} requests, "
      f"{total} bytes: " + ", ".join(f"{kind} {size}" for kind, size in sorted(kinds.items()))
      + "; thumbnails by recipe: " + ", ".join(f"{name} {count}" for name, count in sorted(loaded.items())))
