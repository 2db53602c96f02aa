#!/usr/bin/env python3
"""The web viewer in a real browser: headless Chromium driven by Selenium.

Usage: python3 viewer-test.py OUT_DIR ARTIFACT_DIR [--lazy | --tiles | --stacks | --places]
OUT_DIR holds a build made with --viewer. Serves it on 127.0.0.1 (thumbnails answered after a
delay, so the page is seen before any image arrives), loads index.html at 390x844 and 1440x900,
and checks:
  - the picture index.html carries is shown at once and never fetched; at 390x844 it is the
    largest picture on the first screen and the browser's largest contentful paint;
  - every other grid cell in view is painted from its placeholder before its image has loaded;
  - for every item, the lightbox image's on-screen rect equals the manifest's frame for that
    viewport to 1 px;
  - a long image starts at the top and scrolls;
  - hands and screen readers: no heading twice; the grid and header inert and hidden while the
    lightbox is open; Previous and Next at the sides half-way down and Close in the top corner,
    each at least 44 px; paging announces the new photo (aria-live); zoomed in, ArrowRight pans
    instead of paging;
  - from file://, the page reads thumbframe-viewer-data.js and shows the same items.
With --lazy (a library of several pages): at 390x844 the first cells are drawn from index.html
before any JSON is asked for (no manifest.json request), only the pages near the screen are
fetched and rendered, each file once, scrolling renders more, and the lightbox opens an item
whose page was not loaded.
With --tiles (a build where some photo has deep-zoom tiles): at 1440x900 zoomed to the maximum
(tile budgets: the level within 1.25 device px a pixel, the window's tiles at most 1.5 times its
device pixels, no tile asked for and not shown),
that photo draws the DeepZoom level the manifest's pyramid gives for the device pixels, only
tiles in view, each sharp and placed where its pixels belong; panning loads the tiles there. When
that photo's renditions carry gain maps (`headroom`) and the screen says `dynamic-range: high`
(matchMedia answered so before the page loads), it stays on its largest rendition instead: no
tile is drawn or fetched; and in a 480x320 window, where an SDR screen shows it fitted from the
SDR `small`, an HDR screen shows the gain-map preview.
With --stacks (a build where some photos are stacks): at 390x844 the grid shows each stack as one
cell, its cover's, with the member count, and no cell for the other members; opening it shows a
strip of every member, the cover current; a tap on the strip shows that member; ArrowRight from
the cover goes to the next cell, past the stack's other members; the caption says why in words;
axe-core finds nothing with the strip open.
With --timeline (a build ordered by date over several pages and months): at 390x844 the rows
drawn are the manifest's, the grid has the manifest's height before any grid page is read, the
scrubber (a slider) marks each month and its keys show a month's cells drawn, End reaches the
last; flung through, the page holds a few screens of cells; its height never changes and
nothing shifts (CLS < 0.01).
With --places (a build with --locations): the list of places shows each of summary.places with
its count; a place opens a photo of it, its caption naming the place; every resource the page
loads comes from its own server (no map tiles); axe-core finds nothing with the list open.
Saves screenshots into ARTIFACT_DIR. Prints one line per check and `N passed, M failed`; exits 1
on a failure, 77 when Chromium, its driver or Selenium is missing.
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before anything is imported, fetched or written
    print(__doc__.strip())
    sys.exit(0)

import json
import re
import os
import sys
import time

from axe_selenium_python import Axe
from browsertest import Checks, arguments, browser, manifest_items, serve, violations, wait
from selenium import webdriver
from selenium.webdriver.common.keys import Keys

arguments(__doc__, 2)
out_dir, artifacts = os.path.abspath(sys.argv[1]), sys.argv[2]
lazy = "--lazy" in sys.argv[3:]
tiles = "--tiles" in sys.argv[3:]
stacks = "--stacks" in sys.argv[3:]
places = "--places" in sys.argv[3:]
timeline = "--timeline" in sys.argv[3:]
os.makedirs(artifacts, exist_ok=True)
THUMB_DELAY = 1.5


base, server = serve(out_dir, "/thumbs/", THUMB_DELAY)

manifest, items = manifest_items(out_dir)
viewports = {v["name"]: v for v in manifest["settings"]["viewports"]}

check = Checks()


def tiles_checks():
    driver = browser(1440, 900)
    try:
        driver.get(base + "index.html")
        wait(driver, "return document.body.dataset.ready")
        tiled = [i for i, item in enumerate(items) if "tiles" in item["thumbnails"]]
        check("tiles: the build has a photo with deep-zoom tiles", bool(tiled), f"{len(items)} items")
        if not tiled:
            return
        index = tiled[0]
        entry = items[index]["thumbnails"]["tiles"]
        pyramid = entry["tiles"]
        wait(driver, f"return thumbframeViewer.open({index}).then(() => true)", 5)
        # Every tile the zoom step asks for, as the viewer sets it on an <img>.
        driver.execute_script("""const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, 'src');
            window.tileRequests = [];
            Object.defineProperty(HTMLImageElement.prototype, 'src', { configurable: true, get() { return src.get.call(this); },
              set(value) { if (String(value).includes('_files/')) window.tileRequests.push(String(value)); src.set.call(this, value); } });""")
        driver.execute_script("thumbframeViewer.zoomTo(1000, innerWidth / 2, innerHeight / 2)")
        loaded = """const tiles = [...document.querySelectorAll('#tf-tiles .tf-tile')];
            return tiles.length > 0 && tiles.every((t) => t.complete && t.naturalWidth > 0) && tiles.length"""
        count = wait(driver, loaded, THUMB_DELAY * 4 + 10)
        state = driver.execute_script("""const i = document.getElementById('tf-image'), layer = document.getElementById('tf-tiles');
            const r = i.getBoundingClientRect();
            return { rendition: i.dataset.rendition, level: Number(layer.dataset.level), shown: r.width * devicePixelRatio,
              ratio: devicePixelRatio,
              image: [r.left, r.top, r.right, r.bottom],
              tiles: [...layer.children].map((t) => { const b = t.getBoundingClientRect();
                return { src: t.getAttribute('src'), natural: [t.naturalWidth, t.naturalHeight], rect: [b.left, b.top, b.right, b.bottom] }; }) }""")
        check("tiles: at the maximum zoom past the largest rendition the lightbox draws tiles",
              state["rendition"] == "tiles" and count > 0, f"{state['rendition']}, {count} tiles")
        # The level: the smallest whose width covers the picture's device pixels on screen, a
        # level pixel stretched to at most 1.25 device pixels.
        top = pyramid["levels"] - 1
        expected = top
        while expected > 0 and -(-entry["width"] // 2 ** (top - expected + 1)) * 1.25 >= state["shown"] - 0.5:
            expected -= 1
        check("tiles: the level is the smallest covering the device pixels within 1.25", state["level"] == expected,
              f"level {state['level']}, expected {expected} for {state['shown']:.0f} device px")
        # What the window costs: the tiles' pixels at most 1.5 times the device pixels they cover,
        # and no tile asked for that is not shown (none for a view before the zoom step's scroll).
        window = [max(0, state["image"][0]), max(0, state["image"][1]), min(1440, state["image"][2]), min(900, state["image"][3])]
        covered = (window[2] - window[0]) * (window[3] - window[1]) * state["ratio"] ** 2
        fetched = sum(t["natural"][0] * t["natural"][1] for t in state["tiles"])
        check("tiles: the window's tiles hold at most 1.5 times the device pixels they cover", fetched <= 1.5 * covered,
              f"{fetched} tile pixels for {covered:.0f} device pixels ({fetched / covered:.2f})")
        requested = driver.execute_script("return window.tileRequests")
        shown_sources = {t["src"] for t in state["tiles"]}
        unshown = [r for r in requested if r not in shown_sources]
        check("tiles: every tile the zoom step asked for is shown", requested and not unshown,
              f"{len(requested)} asked, {len(unshown)} not shown: {unshown[:2]}")
        folder = entry["path"][:-4] + "_files/" + str(state["level"]) + "/"
        check("tiles: every tile is the pyramid's, of that level, in its format",
              all(t["src"].rsplit("/", 1)[0] + "/" == base + folder and t["src"].endswith("." + pyramid["format"]) for t in state["tiles"]),
              state["tiles"][0]["src"])
        # Sharp: a tile pixel covers at most 1.25 device pixels.
        worst = max(((t["rect"][2] - t["rect"][0]) * state["ratio"] / t["natural"][0] for t in state["tiles"]), default=9)
        check("tiles: sharp (device pixels per tile pixel ≤ 1.25)", worst <= 1.2501, f"{worst:.4f}")
        # Placed: each tile where its pixels belong in the picture (column and row from its name).
        level_width = -(-entry["width"] // 2 ** (top - state["level"]))
        scale = (state["image"][2] - state["image"][0]) / level_width
        size, overlap = pyramid["tileSize"], pyramid["overlap"]
        misplaced = []
        for t in state["tiles"]:
            c, r = map(int, t["src"].rsplit("/", 1)[1].split(".")[0].split("_"))
            x = state["image"][0] + (c * size - (overlap if c else 0)) * scale
            y = state["image"][1] + (r * size - (overlap if r else 0)) * scale
            if abs(t["rect"][0] - x) > 1 or abs(t["rect"][1] - y) > 1 or abs(t["rect"][2] - t["rect"][0] - t["natural"][0] * scale) > 1:
                misplaced.append(t["src"])
        check("tiles: each tile at its place and size to 1 px", not misplaced, f"{misplaced[:3]}")
        # Only what is in view (and the view covered): every tile meets the window, and
        # points across the window that lie on the picture lie on a tile.
        outside = [t["src"] for t in state["tiles"] if t["rect"][2] < 0 or t["rect"][0] > 1440 or t["rect"][3] < 0 or t["rect"][1] > 900]
        points = [(x, y) for x in range(10, 1440, 160) for y in range(10, 900, 110)
                  if state["image"][0] <= x < state["image"][2] and state["image"][1] <= y < state["image"][3]]
        bare = [p for p in points if not any(t["rect"][0] <= p[0] < t["rect"][2] and t["rect"][1] <= p[1] < t["rect"][3] for t in state["tiles"])]
        check("tiles: only tiles in view, and the view covered", not outside and not bare and points, f"outside {outside[:2]}, bare {bare[:3]}")
        driver.save_screenshot(os.path.join(artifacts, "viewer-tiles.png"))
        # Panning to the far corner loads the tiles there.
        driver.execute_script("const s = document.getElementById('tf-scroll'); s.scrollLeft = s.scrollWidth; s.scrollTop = s.scrollHeight;")
        columns = -(-level_width // size)
        corner = wait(driver, f"""const t = document.querySelector('#tf-tiles .tf-tile[data-tile^="{columns - 1}_"]');
            return !!t && t.complete && t.naturalWidth > 0""", THUMB_DELAY * 4 + 10)
        check("tiles: panning to the right edge loads the last column's tiles", bool(corner))
    finally:
        driver.quit()
    hdr_checks(index)


def fitted_rendition(driver, index):
    """The rendition the lightbox shows photo INDEX from, fitted, once it has loaded."""
    driver.get(base + "index.html")
    wait(driver, "return document.body.dataset.ready")
    wait(driver, f"return thumbframeViewer.open({index}).then(() => true)", 5)
    return wait(driver, """const i = document.getElementById('tf-image');
        return i.complete && i.naturalWidth > 0 && i.dataset.rendition""", THUMB_DELAY * 4 + 10)


def hdr_screen(width, height):
    """A browser whose matchMedia says `dynamic-range: high` (Chromium cannot emulate it)."""
    driver = browser(width, height)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        const real = window.matchMedia.bind(window);
        window.matchMedia = (query) => /dynamic-range:\\s*high/.test(query)
          ? { matches: true, media: query, onchange: null, addEventListener() {}, removeEventListener() {},
              addListener() {}, removeListener() {} } : real(query);"""})
    return driver


def hdr_checks(index):
    """An HDR screen keeps a gain-map photo on its gain-map renditions: its smaller srcset file
    and its tiles are SDR."""
    item = items[index]
    carried = sorted((t["width"], name) for name, t in item["thumbnails"].items() if t.get("headroom"))
    check("hdr: the tiled photo's renditions carry gain maps", bool(carried), f"{[name for _, name in carried]}")
    if not carried:
        return
    # A window small enough that the SDR `small` is sharp for the fitted photo.
    for hdr in (False, True):
        driver = hdr_screen(480, 320) if hdr else browser(480, 320)
        try:
            shown = fitted_rendition(driver, index)
            expected = carried[0][1] if hdr else "small"
            check(f"hdr: fitted in 480x320, an {'HDR' if hdr else 'SDR'} screen shows {expected}", shown == expected, f"{shown}")
        finally:
            driver.quit()
    driver = hdr_screen(1440, 900)
    try:
        fitted_rendition(driver, index)
        driver.execute_script("""window.tileRequests = 0; const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, 'src');
            Object.defineProperty(HTMLImageElement.prototype, 'src', { configurable: true, get() { return src.get.call(this); },
              set(value) { if (String(value).includes('_files/')) window.tileRequests++; src.set.call(this, value); } });""")
        driver.execute_script("thumbframeViewer.zoomTo(1000, innerWidth / 2, innerHeight / 2)")
        largest = carried[-1][1]
        shown = wait(driver, f"""const i = document.getElementById('tf-image');
            return i.dataset.rendition === {json.dumps(largest)} && i.complete && i.naturalWidth > 0 && i.dataset.rendition""",
                     THUMB_DELAY * 4 + 10)
        state = driver.execute_script("""return { tiles: document.querySelectorAll('#tf-tiles .tf-tile').length,
            asked: window.tileRequests, rendition: document.getElementById('tf-image').dataset.rendition }""")
        check("hdr: on an HDR screen, zoomed past the ladder, the photo stays on its largest gain-map rendition",
              shown == largest, f"{state['rendition']}, expected {largest}")
        check("hdr: ... and draws or fetches no SDR tile", state["tiles"] == 0 and state["asked"] == 0, f"{state}")
    finally:
        driver.quit()


def first_screen():
    """The first screen index.html carries (`ViewerWriter.indexHTML`)."""
    html = open(os.path.join(out_dir, "index.html")).read()
    return json.loads(html.split('id="tf-first">', 1)[1].split("</script>", 1)[0])


def lazy_checks():
    driver = browser(390, 844)
    try:
        server.requests.clear()
        # When the first cell is in the page, against when any JSON was asked for.
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            new MutationObserver((_, observer) => {
              if (!document.querySelector('.tf-cell')) return;
              window.__firstCell = performance.now();
              observer.disconnect();
            }).observe(document, { childList: true, subtree: true });"""})
        driver.get(base + "index.html")
        wait(driver, "return document.body.dataset.ready")
        # The pages with rows in the page: those within a screen of the view.
        total = sum(len(section["pages"]) for section in manifest["sections"])
        rendered = "return new Set([...document.querySelectorAll('.tf-row')].map((r) => r.dataset.section + ':' + r.dataset.page)).size"
        first = wait(driver, rendered)
        check("lazy: only the pages near the screen are rendered at first", 0 < first < total, f"{first} of {total}")
        # The whole library's height is known before any grid page is read, and never changes.
        height = driver.execute_script("return document.documentElement.scrollHeight")
        # The first screen complete: every cell in view has its image.
        wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => c.getBoundingClientRect().top < innerHeight);
            return cells.length > 0 && cells.every((c) => c.querySelector('img').complete && c.querySelector('img').naturalWidth > 0)""",
             THUMB_DELAY * 4 + 10)
        paths = [path for path, _ in server.requests]
        pages = [path for path in paths if path.startswith("/pages/")]
        grids = {"/" + page["grid"] for section in manifest["sections"] for page in section["pages"]}
        check("lazy: over HTTP the data script is never loaded (the whole library as one script)",
              "/thumbframe-viewer-data.js" not in paths, f"{paths[:8]}")
        html = open(os.path.join(out_dir, "index.html")).read()
        first_grid = "/" + manifest["sections"][0]["pages"][0]["grid"]
        first_page_count = manifest["sections"][0]["pages"][0]["count"]
        check("lazy: index.html carries the manifest and the first cells: no manifest.json fetched, nor a preload",
              'id="tf-first"' in html and "/manifest.json" not in paths and "rel=\"preload\"" not in html, f"{paths[:6]}")
        check("lazy: the first screen needs only the grid pages on it (the first, past the cells index.html carries)",
              0 <= len(pages) <= first and set(pages) <= grids and paths.count(first_grid) <= (first_page_count > 60),
              f"{pages} of {total}")
        timing = driver.execute_script("""return [window.__firstCell, performance.getEntriesByType('resource')
            .filter((e) => e.name.endsWith('.json')).map((e) => e.startTime)]""")
        check("lazy: the first cells are in the page before any JSON is asked for",
              timing[0] is not None and all(timing[0] < start for start in timing[1]), f"{timing}")
        # Each file fetched once (no preload asked for again: a second download).
        check("lazy: every file is fetched once", len(paths) == len(set(paths)), f"{len(paths)} requests, {len(set(paths))} distinct")
        total = sum(b for _, b in server.requests)
        thumbs = sum(1 for p in paths if p.startswith('/thumbs/'))
        cells = driver.execute_script("return document.querySelectorAll('.tf-cell').length")
        # The JSON and the viewer's files come as their gzip siblings, as a static host sends them.
        sent = {path: b for path, b in server.requests}
        files = ["/index.html"] + pages
        squeezed = [p for p in files if sent[p] * 2 < os.path.getsize(os.path.join(out_dir, p[1:]))]
        check("lazy: the viewer, the top document and the pages come pre-compressed", len(squeezed) == len(files),
              f"{[(p, sent[p]) for p in files]}")
        # The bounds: index.html (the viewer's script and style sheet, 48 KB as they are, 13 KB
        # compressed, the top document and 60 cells), one page of 256 items (470 KB as JSON;
        # compressed a few KB for these alike photos, about an eighth for real ones), and no more
        # thumbnails than cells rendered, each small: under 60 KB in all.
        check("lazy: the first screen stays under 60 KB and 8 requests beyond one a rendered cell",
              total < 60_000 and len(paths) <= 8 + cells and thumbs <= cells, f"{len(paths)} requests, {total} bytes, "
              f"{len(pages)} pages, {thumbs} thumbnails for {cells} cells")
        last = items[-1]
        before = len(server.requests)
        caption = driver.execute_script(f"""return thumbframeViewer.open({len(items) - 1})
            .then(() => document.getElementById('tf-caption').textContent)""")
        check("lazy: the lightbox opens an item whose page was not loaded", last["path"] in caption, caption)
        opened = [path for path, _ in server.requests[before:] if path.startswith("/pages/")]
        last_page = "/" + manifest["sections"][-1]["pages"][-1]["path"]
        check("lazy: opening it fetches its full page, no grid page", opened == [last_page], f"{opened}")
        driver.execute_script("thumbframeViewer.close(); scrollTo(0, document.body.scrollHeight)")
        last = f"{len(manifest['sections']) - 1}:{len(manifest['sections'][-1]['pages']) - 1}"
        more = wait(driver, f"""const rows = [...document.querySelectorAll('.tf-row')];
            return rows.some((r) => r.dataset.section + ':' + r.dataset.page === '{last}' && r.dataset.complete === 'true')
              && rows.length""", 5)
        check("lazy: scrolling to the end draws the last page's rows, and only the rows near the view",
              bool(more) and more < 40, f"{more} rows")
        check("lazy: the page's height never changed", driver.execute_script("return document.documentElement.scrollHeight") == height,
              f"{height}")
    finally:
        driver.quit()


for name, (width, height) in ([] if lazy or tiles or stacks or places or timeline else [("phone", (390, 844)), ("desktop", (1440, 900))]):
    assert viewports[name]["width"] == width and viewports[name]["height"] == height
    driver = browser(width, height)
    try:
        asked = len(server.requests)
        driver.get(base + "index.html")
        check(f"{name}: page ready", wait(driver, "return document.body.dataset.ready") == "true")
        # The picture index.html carries: on the phone the largest on its first screen (what a
        # browser counts as the largest contentful paint), painted with the page, never fetched.
        picture = first_screen()["picture"]
        inline = wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].map((c) => {
              const r = c.getBoundingClientRect(), img = c.querySelector('img');
              const seen = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0)) *
                Math.max(0, Math.min(r.right, innerWidth) - Math.max(r.left, 0));
              return { index: +c.dataset.index, seen, inline: img.classList.contains('tf-inline'),
                painted: img.complete && img.naturalWidth > 0 && img.src.startsWith('data:image/') };
            });
            const largest = cells.reduce((a, b) => (b.seen > a.seen ? b : a), { seen: 0 });
            return cells.length && { inline: cells.filter((c) => c.inline), largest };""", 5)
        carried = inline and inline["inline"]
        check(f"{name}: one cell shows the picture index.html carries, painted at once",
              bool(carried) and len(carried) == 1 and carried[0]["painted"] and carried[0]["index"] == picture["item"], str(inline))
        if name == "phone":
            check("phone: it is the largest picture on the first screen", bool(carried) and inline["largest"]["index"] == picture["item"],
                  str(inline))
            lcp = driver.execute_async_script("""const done = arguments[0];
                new PerformanceObserver((list) => { const e = list.getEntries().pop();
                  done(e.element ? e.element.className : e.url); }).observe({ type: 'largest-contentful-paint', buffered: true });""")
            check("phone: the browser counts it as the largest contentful paint", "tf-inline" in str(lcp), str(lcp))
        # Placeholders first: cells in view are painted while their thumbnails are still delayed.
        state = wait(driver, """
            const cells = [...document.querySelectorAll('.tf-cell')].filter(c => c.getBoundingClientRect().top < innerHeight &&
              !c.querySelector('img.tf-inline'));
            return cells.length && cells.every(c => c.dataset.placeholder === 'painted') &&
              cells.map(c => [c.dataset.placeholder, c.querySelector('img').complete && c.querySelector('img').naturalWidth > 0,
                              getComputedStyle(c).backgroundImage.startsWith('url("data:image/png')]);""", 5)
        check(f"{name}: placeholders painted before the images", bool(state) and all(p == "painted" and not loaded and data
                                                                     for p, loaded, data in state), str(state))
        driver.save_screenshot(os.path.join(artifacts, f"viewer-{name}-placeholders.png"))
        wait(driver, "return [...document.querySelectorAll('.tf-cell img')].slice(0, 3).every(i => i.complete && i.naturalWidth > 0)",
             THUMB_DELAY * 4)
        driver.save_screenshot(os.path.join(artifacts, f"viewer-{name}-grid.png"))
        # Cells load the smallest rendition of the srcset that covers them within 1.25 (the
        # default `small` for a justified grid), never the lightbox's preview.
        srcset = manifest["settings"]["srcset"]
        loaded = wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => c.getBoundingClientRect().top < innerHeight);
            return cells.every((c) => c.querySelector('img').currentSrc) && cells.map((c) => [+c.dataset.index, c.querySelector('img').currentSrc,
              c.getBoundingClientRect().width * devicePixelRatio, c.getBoundingClientRect().height * devicePixelRatio]);""", THUMB_DELAY * 4)
        def covering(item, width, height):
            # The smallest that covers the cell, else the largest; renditions of one size (a
            # picture smaller than the small box) are the same pixels, any of them will do.
            fits = sorted((item["thumbnails"][n] for n in srcset), key=lambda t: t["width"])
            size = next((t for t in fits if t["width"] * 1.25 >= width - 1 and t["height"] * 1.25 >= height - 1), fits[-1])
            return [t["path"] for t in fits if (t["width"], t["height"]) == (size["width"], size["height"])]
        # (The picture index.html carries is its thumbnail's bytes.)
        loaded = loaded and [[i, picture["path"] if src.startswith("data:") else src, w, h] for i, src, w, h in loaded]
        check(f"{name}: every cell in view loads the smallest rendition that covers it within 1.25",
              bool(loaded) and all(any(src.endswith(p) for p in covering(items[i], w, h)) for i, src, w, h in loaded), str(loaded))
        check(f"{name}: the picture index.html carries is not fetched", not any(path == "/" + picture["path"] for path, _ in server.requests[asked:]),
              picture["path"])
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
        # zoom (its natives are for the viewport's scale; this browser's is 1, where a rendition's
        # pixels may stretch by 1.25, as a deep-zoom level's), and it is sharp: at least one of
        # its pixels per 1.25 device pixels, or the largest there is. The photo is one that
        # needs a zoom rendition there when there is one (zoomed in from the fitted one it showed).
        scale = viewports[name]["scale"]

        def rendition(item, at):
            layout = item["layouts"][name]
            ladder, lowest = layout.get("ladder") or [], layout["zoom"]["min"]
            return next((r["name"] for r in ladder if r["native"] / lowest * scale * 1.25 >= at - 1e-4),
                        ladder[-1]["name"] if ladder else None)
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
        check(f"{name}: and sharp there (device pixels per image pixel ≤ 1.25, or the largest rendition)",
              natural * 1.25 >= needed - 1 or largest, f"natural {natural}, on screen {needed}")
        # axe-core (the copy axe-selenium-python ships) finds nothing on the grid or the lightbox.
        driver.execute_script("thumbframeViewer.close()")
        audit = Axe(driver)
        audit.inject()
        found = [(v["id"], len(v["nodes"])) for v in audit.run()["violations"]]
        check(f"{name}: axe-core finds nothing on the grid", not found, f"{found}")
        driver.execute_script("return thumbframeViewer.open(0)")
        found = [(v["id"], len(v["nodes"])) for v in audit.run()["violations"]]
        check(f"{name}: axe-core finds nothing on the lightbox", not found, f"{found}")
        # Hands and screen readers: the library's name is one heading; while the lightbox is open
        # the page under it is inert and hidden; Previous and Next at the sides half-way down and
        # Close in the top corner, each at least 44 px; paging announces the new photo.
        driver.execute_script("thumbframeViewer.close()")
        headings = driver.execute_script("return [...document.querySelectorAll('h1, h2')].map((h) => h.textContent)")
        check(f"{name}: no heading twice (the library's name once)", len(headings) == len(set(headings)), f"{headings}")
        driver.execute_script("return thumbframeViewer.open(0)")
        state = driver.execute_script("""const m = document.getElementById('tf-grid'), h = document.querySelector('body > header');
            const r = (id) => { const b = document.getElementById(id).getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; };
            return { covered: [m.inert, m.getAttribute('aria-hidden'), h.inert], prev: r('tf-prev'), next: r('tf-next'),
                     close: r('tf-close'), w: innerWidth, h: innerHeight }""")
        check(f"{name}: the grid and header are inert and hidden while the lightbox is open",
              state["covered"] == [True, "true", True], f"{state['covered']}")
        prev, nxt, shut, w, h = state["prev"], state["next"], state["close"], state["w"], state["h"]
        check(f"{name}: Previous, Next and Close are at least 44 px",
              all(r[2] >= 44 and r[3] >= 44 for r in (prev, nxt, shut)), f"{prev} {nxt} {shut}")
        check(f"{name}: Previous and Next at the sides half-way down, Close in the top corner",
              prev[0] < w / 4 and nxt[0] + nxt[2] > w * 3 / 4 and all(abs(r[1] + r[3] / 2 - h / 2) < h * 0.1 for r in (prev, nxt))
              and shut[1] < 80 and shut[0] > w * 3 / 4, f"{prev} {nxt} {shut} in {w}x{h}")
        # Paging across sections with the keyboard, and Escape closes.
        webdriver.ActionChains(driver).send_keys("\ue014").perform()  # ArrowRight
        caption = wait(driver, f"const c = document.getElementById('tf-caption').textContent; return c.includes({json.dumps(items[1]['path'])}) && c", 5)
        check(f"{name}: ArrowRight pages to the next section's first item", items[1]["path"] in caption, caption)
        said = driver.execute_script("const a = document.getElementById('tf-announce'); return [a.getAttribute('aria-live'), a.textContent]")
        check(f"{name}: the new photo is announced", said[0] == "polite" and items[1]["path"] in said[1], f"{said}")
        # Zoomed in, the arrows move about the photo instead of paging (the largest photo: one
        # whose files hold a zoom; the viewer zooms a photo no further than they do).
        largest = max((i for i, item in enumerate(items) if item["kind"] == "photo" and not item["layouts"][name]["long"]),
                      key=lambda i: items[i]["image"]["width"] * items[i]["image"]["height"])
        driver.execute_script(f"return thumbframeViewer.show({largest})")
        driver.execute_script("thumbframeViewer.zoomTo(3, innerWidth / 2, innerHeight / 2)")
        before = driver.execute_script("return [document.getElementById('tf-scroll').scrollLeft, document.getElementById('tf-caption').textContent]")
        webdriver.ActionChains(driver).send_keys("\ue014").perform()  # ArrowRight
        after = wait(driver, f"const s = document.getElementById('tf-scroll'); return s.scrollLeft > {before[0]} && [s.scrollLeft, document.getElementById('tf-caption').textContent]", 3)
        check(f"{name}: zoomed in, ArrowRight pans and stays on the photo", bool(after) and after[1] == before[1], f"{before} -> {after}")
        webdriver.ActionChains(driver).send_keys("\ue00c").perform()  # Escape
        check(f"{name}: Escape closes", driver.execute_script("return document.getElementById('tf-lightbox').hidden"))
        # From file://, without a server.
        driver.get("file://" + os.path.join(out_dir, "index.html"))
        ready = wait(driver, "return document.body.dataset.ready")
        count = wait(driver, f"const n = thumbframeViewer.cells().filter(Boolean).length; return n === {len(items)} && n")
        check(f"{name}: works from file://", ready == "true" and count == len(items), f"{ready}, {count} cells")
    finally:
        driver.quit()

def stacks_checks():
    covers = [item for item in items if item.get("stack", {}).get("members")]
    members = [item for item in items if item.get("stack") and not item["stack"].get("members")]
    driver = browser(390, 844)
    try:
        driver.get(base + "index.html")
        wait(driver, "return document.body.dataset.ready")
        expected = len(items) - len(members)
        shown = wait(driver, f"const n = document.querySelectorAll('.tf-cell').length; return n === {expected} && n", 10)
        check("stacks: one cell a stack, none for the other members",
              shown == expected and bool(covers), f"{shown} cells for {len(items)} items, {len(covers)} stacks")
        paths = driver.execute_script("return [...document.querySelectorAll('.tf-cell')].map((c) => c.dataset.path)")
        check("stacks: the cells are the covers and the photos in no stack",
              not {m["path"] for m in members} & set(paths) and {c["path"] for c in covers} <= set(paths), f"{paths}")
        cover = covers[0]
        flat = items.index(cover)
        count = driver.execute_script(f"const c = document.querySelector('.tf-cell[data-index=\"{flat}\"] .tf-stack'); return c && c.textContent")
        check("stacks: the cover's cell shows the member count", count == str(len(cover["stack"]["members"])), f"{count}")
        driver.find_element("css selector", f'.tf-cell[data-index="{flat}"]').click()
        strip = wait(driver, f"""const s = document.getElementById('tf-strip');
            return !s.hidden && s.children.length === {len(cover['stack']['members'])} && s.children.length""", 10)
        current = driver.execute_script("const b = document.querySelector('#tf-strip [aria-current=true]'); return b && [...b.parentNode.children].indexOf(b)")
        check("stacks: opening it shows a strip of every member, the cover current",
              strip == len(cover["stack"]["members"]) and current == cover["stack"]["members"].index(cover["item"]), f"{strip}, {current}")
        driver.save_screenshot(os.path.join(artifacts, "stack-strip.png"))
        other = next(k for k, position in enumerate(cover["stack"]["members"]) if position != cover["item"])
        target = next(i for i in items if i["item"] == cover["stack"]["members"][other] and i.get("stack", {}).get("cover") == cover["item"])
        driver.execute_script(f"document.querySelectorAll('#tf-strip button')[{other}].click()")
        caption = wait(driver, f"const c = document.getElementById('tf-caption').textContent; return c.includes({json.dumps(target['path'])}) && c", 5)
        again = wait(driver, f"const b = document.querySelector('#tf-strip [aria-current=true]'); return b && [...b.parentNode.children].indexOf(b) === {other}", 5)
        check("stacks: a tap on the strip shows that member, the strip still there", bool(caption) and bool(again), f"{caption}")
        check("stacks: the caption says why in words, not the manifest's code",
              "stack" in caption and f"({cover['stack']['reason']})" not in caption and "stack (" not in caption, f"{caption}")
        found = violations(driver)
        check("stacks: axe-core finds nothing with the strip open", not found, f"{found}")
        # Paging goes through the grid's cells: from the cover, past its folded members.
        driver.execute_script(f"thumbframeViewer.open({flat})")
        wait(driver, f"return document.getElementById('tf-caption').textContent.includes({json.dumps(cover['path'])})", 5)
        after = next((i for i in items[flat + 1:] if not (i.get("stack") and i["stack"]["cover"] != i["item"])), None)
        webdriver.ActionChains(driver).send_keys("\ue014").perform()  # ArrowRight
        paged = wait(driver, f"const c = document.getElementById('tf-caption').textContent; return c.includes({json.dumps(after['path'] if after else '')}) && c", 5)
        check("stacks: ArrowRight from the cover goes to the next cell, past the folded members", bool(after) and bool(paged), f"{paged}")
    finally:
        driver.quit()


def places_checks():
    counts = manifest["summary"]["places"]
    driver = browser(1440, 900)
    try:
        driver.get(base + "index.html")
        wait(driver, "return document.body.dataset.ready")
        shown = driver.execute_script("""const d = document.getElementById('tf-places'); d.open = true;
            return d.hidden ? null : [...d.querySelectorAll('button')].map((b) => b.textContent)""")
        expected = sorted((f"{label} ({count})" for label, count in counts.items()))
        check("places: the list shows every place with its photo count", sorted(shown or []) == expected, f"{shown}")
        label = max(counts, key=lambda key: (counts[key], key))
        driver.execute_script(f"[...document.querySelectorAll('#tf-places button')].find((b) => b.textContent.startsWith({json.dumps(label)})).click()")
        caption = wait(driver, f"const c = document.getElementById('tf-caption').textContent; return !document.getElementById('tf-lightbox').hidden && c.includes({json.dumps(label)}) && c", 5)
        paths = [item["path"] for item in items if item.get("place") and caption and item["path"] in caption]
        check("places: a place opens a photo of it, its caption naming the place", bool(caption) and bool(paths), f"{caption}")
        foreign = driver.execute_script("""return performance.getEntriesByType('resource').map((e) => e.name)
            .filter((name) => !name.startsWith(location.origin))""")
        check("places: every resource comes from the page's own server (no map tiles)", foreign == [], f"{foreign}")
        driver.execute_script("thumbframeViewer.close(); document.getElementById('tf-places').open = true")
        found = violations(driver)
        check("places: axe-core finds nothing with the list open", not found, f"{found}")
    finally:
        driver.quit()


def timeline_checks():
    """A library ordered by date over several pages and months, on a phone."""
    driver = browser(390, 844)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            performance.setResourceTimingBufferSize(100000);
            window.__shift = 0; window.__heights = [];
            new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) __shift += e.value; })
              .observe({ type: 'layout-shift', buffered: true });
            (function frame() {
              if (document.body && document.body.dataset.ready) {
                const h = document.documentElement.scrollHeight;
                if (__heights[__heights.length - 1] !== h) __heights.push(h);
              }
              requestAnimationFrame(frame);
            })();"""})
        driver.get(base + "index.html")
        wait(driver, "return document.body.dataset.ready")
        # The rows drawn are the manifest's: each page's row lengths at the phone's width.
        pages = [page for section in manifest["sections"] for page in section["pages"]]
        drawn = driver.execute_script("""const rows = {};
            for (const r of [...document.querySelectorAll('.tf-row')].sort((a, b) => a.offsetTop - b.offsetTop))
              (rows[r.dataset.section + ':' + r.dataset.page] ||= []).push(r.children.length);
            return rows;""")
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        expected = [alphabet.index(c) for c in pages[0]["rows"]["phone"]]
        check("timeline: the first page's rows are the manifest's rows for the phone", drawn.get("0:0") == expected[:len(drawn.get("0:0", []))]
              and len(drawn.get("0:0", [])) > 3, f"{drawn.get('0:0')} vs {expected[:12]}")
        total = sum(section["heights"]["phone"] for section in manifest["sections"])
        height = driver.execute_script("return document.getElementById('tf-grid').getBoundingClientRect().height")
        check("timeline: the grid is the manifest's height before its pages are read", abs(height - total - 8) <= 1,
              f"{height} vs {total} + 8")
        # The scrubber: a mark a month, the last reached with End; its rows drawn, nothing moves.
        labels = driver.execute_script("return thumbframeViewer.marks().map((m) => m.label)")
        check("timeline: the scrubber marks each month", labels == [e["label"] for e in manifest["timeline"]] and len(labels) >= 3,
              f"{labels}")
        track = driver.find_element("id", "tf-scrubber")
        check("timeline: the scrubber is a slider a screen reader can use", track.get_attribute("role") == "slider"
              and track.is_displayed(), track.get_attribute("outerHTML")[:200])
        most = 0
        for key in ["End", "Home", "PageDown", "ArrowDown"]:
            track.send_keys(getattr(Keys, {"End": "END", "Home": "HOME", "PageDown": "PAGE_DOWN", "ArrowDown": "ARROW_DOWN"}[key]))
            state = wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => {
                  const r = c.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
                return cells.length > 0 && cells.every((c) => !c.classList.contains('tf-pending') && c.dataset.placeholder === 'painted')
                  && [document.getElementById('tf-scrubber').getAttribute('aria-valuetext'), document.querySelectorAll('.tf-cell').length,
                      scrollY];""", 5)
            most = max(most, state[1] if state else 0)
            check(f"timeline: {key} on the scrubber shows a month's cells drawn", bool(state) and state[0] in labels, f"{state}")
            if key == "End":
                check("timeline: End reaches the last month", driver.execute_script(
                    "return thumbframeViewer.marks().at(-1).y <= scrollY + innerHeight"), "")
        # Flung through the whole library: the page holds a few screens of cells, never all.
        for y in range(0, driver.execute_script("return document.documentElement.scrollHeight"), 600):
            driver.execute_script(f"scrollTo(0, {y})")
            most = max(most, driver.execute_script("return document.querySelectorAll('.tf-cell').length"))
        check("timeline: at most a few screens of cells in the page", 0 < most <= 150, f"{most} cells at most")
        # Scrolled back up: the rows drawn last come first in the page, as they are seen (Tab order).
        driver.execute_script("scrollTo(0, document.documentElement.scrollHeight / 2)")
        driver.execute_script("scrollTo(0, document.documentElement.scrollHeight / 2 - 1500)")
        order = wait(driver, """const tops = [...document.querySelectorAll('#tf-grid > *')].map((e) => e.offsetTop);
            return tops.length > 5 && tops.every((t, k) => k === 0 || tops[k - 1] <= t) && tops.length;""", 3)
        check("timeline: rows are in the page in the order they are seen", bool(order), f"{order}")
        # A drag down the scrubber: nothing fetched while it moves (the rows passed over are
        # boxes); where it is let go, the cells are drawn.
        box = driver.execute_script("const r = document.getElementById('tf-scrubber').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]")
        x, mouse = box[0] + box[2] / 2, lambda kind, y: driver.execute_cdp_cmd("Input.dispatchMouseEvent", {
            "type": kind, "x": x, "y": y, "button": "left", "buttons": 1 if kind != "mouseReleased" else 0, "clickCount": 1})
        # (What the page asked for while it moved: Resource Timing's start times, not the test
        # server's arrivals, which lag behind a browser's queue of delayed pictures.)
        started = driver.execute_script("return performance.now()")
        mouse("mousePressed", box[1] + 0.1 * box[3])
        for k in range(2, 9):
            mouse("mouseMoved", box[1] + k / 10 * box[3])
            time.sleep(0.05)
        ended = driver.execute_script("return performance.now()")
        mouse("mouseReleased", box[1] + 0.8 * box[3])
        drawn = wait(driver, """const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => {
              const r = c.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
            return cells.length > 0 && cells.every((c) => !c.classList.contains('tf-pending') && c.dataset.placeholder === 'painted')
              && scrollY;""", 5)
        time.sleep(THUMB_DELAY + 0.5)
        during = driver.execute_script(f"""return performance.getEntriesByType('resource')
            .filter((e) => e.startTime >= {started} && e.startTime <= {ended}).map((e) => e.name)""")
        check("timeline: a drag on the scrubber fetches nothing until it is let go, then draws where it ends",
              not during and bool(drawn) and drawn > 0.6 * driver.execute_script("return document.documentElement.scrollHeight - innerHeight"),
              f"{during[:5]}, at {drawn}")
        state = driver.execute_script("return [__heights, __shift]")
        check("timeline: the page's height never changed and nothing shifted", len(state[0]) == 1 and state[1] < 0.01, f"{state}")
        found = violations(driver)
        check("timeline: axe-core finds nothing with the scrubber shown", not found, f"{found}")
        driver.save_screenshot(os.path.join(artifacts, "timeline-phone.png"))
    finally:
        driver.quit()


if timeline:
    timeline_checks()
elif places:
    places_checks()
elif stacks:
    stacks_checks()
elif lazy:
    lazy_checks()
elif tiles:
    tiles_checks()
server.shutdown()
check.finish()
