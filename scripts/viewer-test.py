"""The web viewer in a real browser: headless Chromium driven by Selenium.

Usage: python3 viewer-test.py OUT_DIR ARTIFACT_DIR [--lazy]
OUT_DIR holds a build made with --viewer. Serves it on 127.0.0.1 (thumbnails answered after a
delay, so the page is seen before any image arrives), loads index.html at 390x844 and 1440x900,
and checks:
  - every grid cell in view is painted from its placeholder before its image has loaded;
  - for every item, the lightbox image's on-screen rect equals the manifest's frame for that
    viewport to 1 px;
  - a long image starts at the top and scrolls;
  - from file://, the page reads thumbframe-viewer-data.js and shows the same items.
With --lazy (a library of several pages): at 390x844 only the pages near the screen are fetched
and rendered, scrolling renders more, and the lightbox opens an item whose page was not loaded.
Saves screenshots into ARTIFACT_DIR. Prints one line per check and `N passed, M failed`; exits 1
on a failure, 77 when Chromium, its driver or Selenium is missing.
"""
import json
import os
import sys

from browsertest import Checks, browser, manifest_items, serve, wait
from selenium import webdriver

out_dir, artifacts = os.path.abspath(sys.argv[1]), sys.argv[2]
lazy = "--lazy" in sys.argv[3:]
os.makedirs(artifacts, exist_ok=True)
THUMB_DELAY = 1.5


base, server = serve(out_dir, "/thumbs/", THUMB_DELAY)

manifest, items = manifest_items(out_dir)
viewports = {v["name"]: v for v in manifest["settings"]["viewports"]}

check = Checks()


def lazy_checks():
    driver = browser(390, 844)
    try:
        server.requests.clear()
        driver.get(base + "index.html")
        wait(driver, "return document.body.dataset.ready")
        total = len(driver.find_elements("css selector", ".tf-page"))
        first = wait(driver, "return document.querySelectorAll('.tf-page[data-rendered]').length")
        check("lazy: only the pages near the screen are rendered at first", 0 < first < total, f"{first} of {total}")
        # The first screen complete: every cell in view has its image.
        wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => c.getBoundingClientRect().top < innerHeight);
            return cells.length > 0 && cells.every((c) => c.querySelector('img').complete && c.querySelector('img').naturalWidth > 0)""",
             THUMB_DELAY * 4 + 10)
        paths = [path for path, _ in server.requests]
        pages = [path for path in paths if path.startswith("/pages/")]
        check("lazy: over HTTP the data script is never loaded (the whole library as one script)",
              "/thumbframe-viewer-data.js" not in paths, f"{paths[:8]}")
        check("lazy: the first screen needs the top document and the pages on it, no other page",
              "/manifest.json" in paths and 0 < len(pages) <= first, f"{len(pages)} pages of {total}")
        total = sum(b for _, b in server.requests)
        thumbs = sum(1 for p in paths if p.startswith('/thumbs/'))
        cells = driver.execute_script("return document.querySelectorAll('.tf-cell').length")
        # The bounds: the viewer's files and the top document (under 60 KB), one page of 256
        # items (about 420 KB uncompressed), and no more thumbnails than cells rendered, each of
        # them small: under 600 KB in all, about 20 requests.
        check("lazy: the first screen stays under 600 KB and 8 requests beyond one a rendered cell",
              total < 600_000 and len(paths) <= 8 + cells and thumbs <= cells, f"{len(paths)} requests, {total} bytes, "
              f"{len(pages)} pages, {thumbs} thumbnails for {cells} cells")
        last = items[-1]
        caption = driver.execute_script(f"""return thumbframeViewer.open({len(items) - 1})
            .then(() => document.getElementById('tf-caption').textContent)""")
        check("lazy: the lightbox opens an item whose page was not loaded", last["path"] in caption, caption)
        driver.execute_script("thumbframeViewer.close(); scrollTo(0, document.body.scrollHeight)")
        more = wait(driver, f"const n = document.querySelectorAll('.tf-page[data-rendered]').length; return n > {first} && n", 5)
        check("lazy: scrolling renders the pages it reaches", bool(more), f"{more} of {total}")
    finally:
        driver.quit()


for name, (width, height) in ([] if lazy else [("phone", (390, 844)), ("desktop", (1440, 900))]):
    assert viewports[name]["width"] == width and viewports[name]["height"] == height
    driver = browser(width, height)
    try:
        driver.get(base + "index.html")
        check(f"{name}: page ready", wait(driver, "return document.body.dataset.ready") == "true")
        # Placeholders first: cells in view are painted while their thumbnails are still delayed.
        state = wait(driver, """
            const cells = [...document.querySelectorAll('.tf-cell')].filter(c => c.getBoundingClientRect().top < innerHeight);
            return cells.length && cells.every(c => c.dataset.placeholder === 'painted') &&
              cells.map(c => [c.dataset.placeholder, c.querySelector('img').complete && c.querySelector('img').naturalWidth > 0,
                              getComputedStyle(c).backgroundImage.startsWith('url("data:image/png')]);""", 5)
        check(f"{name}: placeholders painted before the images", bool(state) and all(p == "painted" and not loaded and data
                                                                     for p, loaded, data in state), str(state))
        driver.save_screenshot(os.path.join(artifacts, f"viewer-{name}-placeholders.png"))
        wait(driver, "return [...document.querySelectorAll('.tf-cell img')].slice(0, 3).every(i => i.complete && i.naturalWidth > 0)",
             THUMB_DELAY * 4)
        driver.save_screenshot(os.path.join(artifacts, f"viewer-{name}-grid.png"))
        # Cells load the smallest rendition of the srcset that covers them (the default `small`
        # for a justified grid), never the lightbox's preview.
        srcset = manifest["settings"]["srcset"]
        loaded = wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => c.getBoundingClientRect().top < innerHeight);
            return cells.every((c) => c.querySelector('img').currentSrc) && cells.map((c) => [+c.dataset.index, c.querySelector('img').currentSrc,
              c.getBoundingClientRect().width * devicePixelRatio, c.getBoundingClientRect().height * devicePixelRatio]);""", THUMB_DELAY * 4)
        def covering(item, width, height):
            # The smallest that covers the cell, else the largest; renditions of one size (a
            # picture smaller than the small box) are the same pixels, any of them will do.
            fits = sorted((item["thumbnails"][n] for n in srcset), key=lambda t: t["width"])
            size = next((t for t in fits if t["width"] >= width - 1 and t["height"] >= height - 1), fits[-1])
            return [t["path"] for t in fits if (t["width"], t["height"]) == (size["width"], size["height"])]
        check(f"{name}: every cell in view loads the smallest rendition that covers it",
              bool(loaded) and all(any(src.endswith(p) for p in covering(items[i], w, h)) for i, src, w, h in loaded), str(loaded))
        # The lightbox image where the manifest says, for every item.
        for index, item in enumerate(items):
            frame = item["layouts"][name]["frame"]
            rect = driver.execute_script(f"""
                return thumbframeViewer.open({index}).then(() => {{
                  const r = document.getElementById('tf-image').getBoundingClientRect();
                  return [r.x, r.y, r.width, r.height, document.getElementById('tf-image').dataset.viewport]; }});""")
            expected = [frame["x"], frame["y"], frame["width"], frame["height"]]
            check(f"{name}: {item['path']} at the manifest's frame",
                  rect[4] == name and all(abs(a - b) <= 1 for a, b in zip(rect[:4], expected)), f"{rect} vs {expected}")
            if item["layouts"][name]["long"]:
                scroll = driver.execute_script("""
                    const s = document.getElementById('tf-scroll'); const top = s.scrollTop;
                    s.scrollTop = s.scrollHeight; return [top, s.scrollTop, s.scrollHeight, s.clientHeight];""")
                check(f"{name}: long {item['path']} starts at the top and scrolls",
                      scroll[0] == 0 and scroll[1] > 0 and scroll[2] > scroll[3], str(scroll))
                driver.execute_script("document.getElementById('tf-scroll').scrollTop = 0")
                wait(driver, "const i = document.getElementById('tf-image'); return i.complete && i.naturalWidth > 0", THUMB_DELAY * 4)
                driver.save_screenshot(os.path.join(artifacts, f"viewer-{name}-long.png"))
        # The page's ThumbHash decoder against the independent one (thumbhash-python), where
        # installed: same size, every channel within 1 level.
        try:
            import base64
            from thumbhash.decode import thumbhash_to_rgba
            worst = 0
            for item in items:
                hash64 = item["placeholder"]["thumbhash"]
                w, h, rgba = driver.execute_script(f"return thumbframeViewer.thumbHashToRGBA('{hash64}')")
                ow, oh, orgba = thumbhash_to_rgba(base64.b64decode(hash64))
                if (w, h) == (ow, oh):
                    worst = max(worst, max(abs(a - b) for a, b in zip(rgba, orgba)))
            check(f"{name}: the page's ThumbHash decoder agrees with thumbhash-python", worst <= 1, f"worst {worst}")
        except ImportError:
            pass
        # Double-click zooms to the preset's double-tap zoom; zoom never passes the maximum.
        index = next(i for i, item in enumerate(items) if not item["layouts"][name]["long"] and item["image"]["width"] > 1000)
        zoom = items[index]["layouts"][name]["zoom"]
        driver.execute_script(f"return thumbframeViewer.open({index})")
        webdriver.ActionChains(driver).double_click(driver.find_element("id", "tf-image")).perform()
        width = wait(driver, "const z = thumbframeViewer.zoom(); return z > 1 && document.getElementById('tf-image').getBoundingClientRect().width", 3)
        frame_width = items[index]["layouts"][name]["frame"]["width"]
        expected_zoom = min(zoom["doubleTap"], zoom["max"]) / zoom["min"]
        check(f"{name}: double-click zooms to doubleTap", bool(width) and abs(width - frame_width * expected_zoom) <= 1,
              f"{width} vs {frame_width * expected_zoom}")
        most = driver.execute_script("thumbframeViewer.zoomTo(1000, 100, 100); return thumbframeViewer.zoom()")
        check(f"{name}: zoom stops at the preset's maximum", abs(most - zoom["max"] / zoom["min"]) < 1e-6, f"{most}")
        # At the maximum zoom the lightbox shows the rendition the layout's ladder names for that
        # zoom (its natives are for the viewport's scale; this browser's is 1), and it is sharp: at
        # least one of its pixels per device pixel, or the largest there is. The photo is one that
        # needs a zoom rendition there when there is one (zoomed in from the fitted one it showed).
        scale = viewports[name]["scale"]

        def rendition(item, at):
            layout = item["layouts"][name]
            ladder, lowest = layout.get("ladder") or [], layout["zoom"]["min"]
            return next((r["name"] for r in ladder if r["native"] / lowest * scale >= at - 1e-4), ladder[-1]["name"] if ladder else None)
        index = next((i for i, item in enumerate(items) if (rendition(item, item["layouts"][name]["zoom"]["max"] / item["layouts"][name]["zoom"]["min"]) or "").startswith("zoom-")), index)
        layout = items[index]["layouts"][name]
        ladder, zoom = layout.get("ladder") or [], layout["zoom"]
        top = zoom["max"] / zoom["min"]
        fitted = wait(driver, f"return thumbframeViewer.open({index}).then(() => document.getElementById('tf-image').dataset.rendition)", 5)
        check(f"{name}: fitted, {items[index]['path']} shows {rendition(items[index], 1)}", fitted == rendition(items[index], 1), f"{fitted}")
        driver.execute_script("thumbframeViewer.zoomTo(1000, innerWidth / 2, innerHeight / 2)")
        expected = rendition(items[index], top)
        shown = wait(driver, "const i = document.getElementById('tf-image'); "
                     f"return i.dataset.rendition === {json.dumps(expected)} && i.complete && i.naturalWidth > 0 && i.dataset.rendition", 10)
        check(f"{name}: at the maximum zoom {items[index]['path']} shows {expected}, the ladder's rendition", shown == expected, f"{shown}")
        natural, needed = driver.execute_script(
            "const i = document.getElementById('tf-image'); return [i.naturalWidth, i.getBoundingClientRect().width * devicePixelRatio]")
        largest = bool(ladder) and expected == ladder[-1]["name"]
        check(f"{name}: and sharp there (device pixels per image pixel ≤ 1, or the largest rendition)",
              natural >= needed - 1 or largest, f"natural {natural}, on screen {needed}")
        # Paging across sections with the keyboard, and Escape closes.
        driver.execute_script("return thumbframeViewer.open(0)")
        webdriver.ActionChains(driver).send_keys("\ue014").perform()  # ArrowRight
        caption = wait(driver, f"const c = document.getElementById('tf-caption').textContent; return c.includes({json.dumps(items[1]['path'])}) && c", 5)
        check(f"{name}: ArrowRight pages to the next section's first item", items[1]["path"] in caption, caption)
        webdriver.ActionChains(driver).send_keys("\ue00c").perform()  # Escape
        check(f"{name}: Escape closes", driver.execute_script("return document.getElementById('tf-lightbox').hidden"))
        # From file://, without a server.
        driver.get("file://" + os.path.join(out_dir, "index.html"))
        ready = wait(driver, "return document.body.dataset.ready")
        count = wait(driver, f"const n = thumbframeViewer.items().filter(Boolean).length; return n === {len(items)} && n")
        check(f"{name}: works from file://", ready == "true" and count == len(items), f"{ready}, {count} items")
    finally:
        driver.quit()

if lazy:
    lazy_checks()
server.shutdown()
check.finish()
