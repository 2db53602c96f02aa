#!/usr/bin/env python3
"""The PhotoSwipe page of docs/frontends.md, unchanged, against PhotoSwipe 5.4.4 in headless Chromium.

Usage: python3 photoswipe-test.py docs/frontends.md PHOTOSWIPE_DIR OUT_DIR ARTIFACT_DIR [--originals SOURCE_DIR]
The page is that page's two blocks as they are (the HTML page, with its placeholder comment
replaced by the data-source mapping block). PHOTOSWIPE_DIR holds PhotoSwipe 5.4.4's
photoswipe.css, photoswipe.esm.js and photoswipe-lightbox.esm.js (scripts/bootstrap --test takes
them from the sigal 2.6.1 wheel, which bundles them). OUT_DIR is a build made with
--preset photoswipe, served as photos/ beside the page; with --originals, a build made with
--original-url originals/ and SOURCE_DIR served as originals/.
At 390x844 and 1440x900, for every item opened from the grid, checks that PhotoSwipe shows it at
the manifest's frame to 1 px, that a click zooms to the manifest's doubleTap and ctrl+wheel stops
at its max (PhotoSwipe's own zoom levels, read from the image's on-screen width), and that the
image PhotoSwipe loaded is the one the manifest's layouts are for; and that axe-core finds nothing
on the grid or the open lightbox, and Tab then Enter open the first cell. Saves screenshots into
ARTIFACT_DIR. Prints one line per check and `N passed, M failed`; exits 1 on a failure, 77 when
Chromium, its driver or Selenium is missing.
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before anything is imported, fetched or written
    print(__doc__.strip())
    sys.exit(0)

import json
import os
import re
import shutil
import sys
import tempfile
import time
from urllib.parse import quote

from browsertest import Checks, arguments, browser, manifest_items, serve, violations, wait
from selenium import webdriver
from selenium.webdriver.common.actions.action_builder import ActionBuilder

arguments(__doc__, 4)
given = sys.argv[1:]
originals = None
if "--originals" in given:
    at = given.index("--originals")
    originals = os.path.abspath(given[at + 1])
    del given[at:at + 2]
readme, photoswipe, out_dir, artifacts = given[0], given[1], os.path.abspath(given[2]), given[3]
os.makedirs(artifacts, exist_ok=True)
FILES = ["photoswipe.css", "photoswipe.esm.js", "photoswipe-lightbox.esm.js"]
check = Checks()


def readme_page():
    """The page with its mapping block put where its comment says; None if docs/frontends.md
    no longer has them."""
    text = open(readme, encoding="utf-8").read()
    match = re.search(r"A whole page, with PhotoSwipe's own files.*?```html\n(.*?)```.*?```js\n(.*?)```", text, re.S)
    marker = "/* the data-source mapping below */"
    if not match or marker not in match.group(1):
        return None
    return match.group(1).replace(marker, match.group(2))


page = readme_page()
check("docs/frontends.md has the PhotoSwipe page and its mapping", page is not None)
for name in FILES:
    head = open(os.path.join(photoswipe, name), encoding="utf-8").read(200)
    check(f"{name} is PhotoSwipe 5.4.4", name.endswith(".css") or "5.4.4" in head, head.splitlines()[1] if "\n" in head else head)
if page is None:
    check.finish()

site = tempfile.mkdtemp(prefix="thumbframe-photoswipe-")
with open(os.path.join(site, "index.html"), "w", encoding="utf-8") as handle:
    handle.write(page)
for name in FILES:
    shutil.copy(os.path.join(photoswipe, name), site)
os.symlink(out_dir, os.path.join(site, "photos"))
if originals:
    os.symlink(originals, os.path.join(site, "originals"))
base, server = serve(site)
manifest, items = manifest_items(out_dir)
display = manifest["settings"]["display"]
check("the build is --preset photoswipe" + (" with --original-url originals/" if originals else ""),
      manifest["settings"]["preset"] == "photoswipe" and manifest["settings"].get("originalURL") == ("originals/" if originals else None))

# The current slide's image (not its placeholder), once loaded: its on-screen rect and source.
CURRENT = """
    const holder = document.querySelector('.pswp__item[aria-hidden="false"]');
    const img = holder && holder.querySelector('img.pswp__img:not(.pswp__img--placeholder)');
    if (!img || !img.complete || !img.naturalWidth) return null;
    const r = img.getBoundingClientRect();
    return [r.x, r.y, r.width, r.height, img.currentSrc];"""


def settled(driver, timeout=10):
    """The current image's rect once it stops moving (PhotoSwipe animates opening and zooming)."""
    last, same, end = None, 0, time.time() + timeout
    while time.time() < end:
        value = driver.execute_script(CURRENT)
        same = same + 1 if value is not None and value == last else 0
        if same >= 2:
            return value
        last = value
        time.sleep(0.06)
    return last


def click_until(driver, x, y, done, tries=20):
    """Clicks at (x, y) until `done()` holds: PhotoSwipe ignores pointers until its opening
    animation has ended, which no DOM state shows (a fade changes no rect). True if it held."""
    for _ in range(tries):
        click = ActionBuilder(driver)
        click.pointer_action.move_to_location(int(x), int(y))
        click.pointer_action.click()
        click.perform()
        end = time.time() + 0.5
        while time.time() < end:
            if done():
                return True
            time.sleep(0.05)
    return False


def ratio(rect, width):
    return "not shown" if rect is None else f"{rect[2] / width:.4f}"


def near(rect_width, zoom, width):
    return abs(rect_width - zoom * width) <= 1


for name, (width, height) in [("phone", (390, 844)), ("desktop", (1440, 900))]:
    viewport = next(v for v in manifest["settings"]["viewports"] if v["name"] == name)
    assert (viewport["width"], viewport["height"]) == (width, height)
    driver = browser(width, height)
    try:
        driver.get(base + "index.html")
        cells = wait(driver, f"return document.querySelectorAll('#grid img').length === {len(items)}")
        check(f"{name}: the page shows the {len(items)} items", cells)
        # Reachable and described: axe-core finds nothing on the grid; Tab reaches the first cell
        # and Enter opens it; axe-core finds nothing on the open lightbox either.
        found = violations(driver)
        check(f"{name}: axe-core finds nothing on the grid", not found, f"{found}")
        webdriver.ActionChains(driver).send_keys("\ue004").perform()  # Tab
        focused = driver.execute_script("const a = document.activeElement; return a && a.matches('#grid a') && a.querySelector('img').alt")
        webdriver.ActionChains(driver).send_keys("\ue007").perform()  # Enter
        opened = wait(driver, "return !!document.querySelector('.pswp--open')", 5)
        check(f"{name}: Tab reaches the first cell ({focused}) and Enter opens it", bool(focused) and bool(opened), f"{focused}, {opened}")
        time.sleep(0.5)  # PhotoSwipe's opening transition
        # PhotoSwipe marks its carousel and slides with aria-roledescription (ARIA 1.1), which
        # the axe-core axe-selenium-python ships (3.1.1) does not know yet: that finding alone is left out.
        found = [v for v in violations(driver)
                 if not (v[0] == "aria-valid-attr" and all("aria-roledescription" in html for html in v[2]))]
        check(f"{name}: axe-core finds nothing on the open lightbox", not found, f"{found}")
        webdriver.ActionChains(driver).send_keys("\ue00c").perform()  # Escape
        wait(driver, "return !document.querySelector('.pswp--open')", 5)
        for index, item in enumerate(items):
            layout = item["layouts"][name]
            frame, zoom = layout["frame"], layout["zoom"]
            if item["kind"] == "video" and (originals or item["video"].get("rendition")):
                driver.execute_script(f"document.querySelectorAll('#grid img')[{index}].click()")
                # One this browser cannot play is its poster and a note saying so.
                wait(driver, "return !!document.querySelector('.pswp--open')", 5)
                note = wait(driver, """const n = document.querySelector('.pswp--open .pswp__note');
                    return n && !n.hidden && n.textContent;""", 2)
                if note:
                    video = driver.execute_script("""return !!document.querySelector('.pswp__item[aria-hidden="false"] video')""")
                    check(f"{name}: video {item['path']} ({item['video']['codec']}) says it does not play here, its poster shown",
                          "does not play in this browser" in note and not video, f"{note} {video}")
                    time.sleep(0.6)  # the opening animation, before Escape is taken
                    webdriver.ActionChains(driver).send_keys("\ue00c").perform()  # Escape
                    check(f"{name}: Escape closes {item['path']}", wait(driver, "return !document.querySelector('.pswp')", 5))
                    continue
                # A video slide: the page's <video> at the manifest's frame, from the original; it plays.
                state = wait(driver, """
                    const v = document.querySelector('.pswp__item[aria-hidden="false"] video');
                    if (!v) return null; const r = v.getBoundingClientRect();
                    return [r.x, r.y, r.width, r.height, v.currentSrc || v.src];""", 5)
                expected = [frame["x"], frame["y"], frame["width"], frame["height"]]
                time.sleep(0.6)  # the opening animation
                state = driver.execute_script("""
                    const v = document.querySelector('.pswp__item[aria-hidden="false"] video'); const r = v.getBoundingClientRect();
                    return [r.x, r.y, r.width, r.height, v.currentSrc || v.src];""") if state else None
                # From its original where this browser plays it, else from its rendition (first
                # when the original only needs a remux).
                video = item["video"]
                codecs = video.get("codecs")
                own = bool(originals) and (video["playable"] or bool(codecs and driver.execute_script(
                    "return document.createElement('video').canPlayType(arguments[0]) !== ''", f'video/mp4; codecs="{codecs}"')))
                rendition = video.get("rendition")
                order = [rendition and "rendition", own and "original"]
                if video["delivery"] != "remux":
                    order.reverse()
                source = next(s for s in order if s)
                src = (base.rstrip("/") + "/originals/" + quote(item["path"]) if source == "original"
                       else base.rstrip("/") + "/photos/" + rendition["path"])
                check(f"{name}: video {item['path']} at the manifest's frame, from its {source}",
                      state is not None and all(abs(a - b) <= 1 for a, b in zip(state[:4], expected))
                      and state[4] == src, f"{state} vs {expected}, {src}")
                played = driver.execute_script("""const v = document.querySelector('.pswp__item[aria-hidden="false"] video');
                    v.muted = true; return v.play().then(() => true, (e) => String(e));""")
                moved = wait(driver, """const v = document.querySelector('.pswp__item[aria-hidden="false"] video');
                    return v.currentTime > 0.2 && v.currentTime""", 8)
                check(f"{name}: video {item['path']} plays", played is True and bool(moved), f"{played} {moved}")
                sheet = video.get("scrub")
                if sheet:
                    at = min(video["duration"] * 0.6, video["duration"] - 0.1)
                    tile = min(sheet["count"] - 1, int(at // sheet["interval"]))
                    position = f"{-(tile % sheet['columns']) * sheet['tileWidth']}px {-(tile // sheet['columns']) * sheet['tileHeight']}px"
                    driver.execute_script(f"""const v = document.querySelector('.pswp__item[aria-hidden="false"] video');
                        v.pause(); v.currentTime = {at};""")
                    shown = wait(driver, """const v = document.querySelector('.pswp__item[aria-hidden="false"] video');
                        const s = v.parentElement.querySelector('.scrub');
                        return s && s.style.display === 'block' && [s.style.display, s.style.backgroundPosition, s.style.backgroundImage];""", 3)
                    check(f"{name}: video {item['path']} scrubbed to {at:.1f} s shows tile {tile} of its sprite",
                          bool(shown) and shown[0] == "block" and shown[1] == position and sheet["sprite"] in shown[2],
                          f"{shown} vs {position}")
                webdriver.ActionChains(driver).send_keys("\ue00c").perform()  # Escape
                wait(driver, "return !document.querySelector('.pswp')", 5)
                continue
            # The width PhotoSwipe was given: the original's where browsers decode it, else the
            # display thumbnail's (a TIFF, HEIC or RAW original gives way to it).
            original = bool(originals) and item["image"]["format"] in manifest["settings"]["browserFormats"]
            slide_width = item["image"]["width"] if original else item["thumbnails"][display]["width"]
            driver.execute_script(f"document.querySelectorAll('#grid img')[{index}].click()")
            rect = settled(driver)
            expected = [frame["x"], frame["y"], frame["width"], frame["height"]]
            check(f"{name}: {item['path']} at the manifest's frame",
                  rect is not None and all(abs(a - b) <= 1 for a, b in zip(rect[:4], expected)), f"{rect and rect[:4]} vs {expected}")
            # The original, or a rendition of the srcset (settings.srcset: the display thumbnail, or
            # a smaller one the browser picks for the fitted slide), never the grid's crop; the
            # frame is the display thumbnail's either way (PhotoSwipe was given its size).
            ladder = manifest["settings"].get("ladder")
            srcset = manifest["settings"]["srcset"] + [r["name"] for r in ladder["renditions"]] if ladder else manifest["settings"]["srcset"]
            srcset = [n for n in srcset if n in item["thumbnails"]]
            wanted = ["/originals/" + quote(item["path"])] if original else ["/photos/" + item["thumbnails"][n]["path"] for n in srcset]
            check(f"{name}: {item['path']} loads the original or a rendition of the srcset",
                  rect is not None and rect[4] in [base.rstrip("/") + w for w in wanted], rect and rect[4])
            if index == 1:
                driver.save_screenshot(os.path.join(artifacts, f"photoswipe-{name}{'-originals' if originals else ''}.png"))
            # A click on the image: PhotoSwipe's secondary zoom, which is the manifest's doubleTap;
            # where that equals the fit (nothing to zoom to), PhotoSwipe closes instead.
            x = frame["x"] + frame["width"] / 2
            y = min(frame["y"] + frame["height"] / 2, height / 2)
            if zoom["doubleTap"] == zoom["min"]:
                closed = click_until(driver, x, y, lambda: driver.execute_script("return !document.querySelector('.pswp')"))
                check(f"{name}: {item['path']} click closes (doubleTap = min = {zoom['min']})", closed)
                driver.execute_script(f"document.querySelectorAll('#grid img')[{index}].click()")
                settled(driver)
            else:
                fitted = rect[2] if rect else 0
                click_until(driver, x, y, lambda: (driver.execute_script(CURRENT) or [0, 0, fitted])[2] != fitted)
                tapped = settled(driver)
                check(f"{name}: {item['path']} click zooms to doubleTap {zoom['doubleTap']}",
                      tapped is not None and near(tapped[2], zoom["doubleTap"], slide_width), ratio(tapped, slide_width))
            # ctrl+wheel far in: PhotoSwipe stops at its maximum, which is the manifest's max.
            driver.execute_script(f"""document.querySelector('.pswp').dispatchEvent(new WheelEvent('wheel',
                {{ deltaY: -5000, ctrlKey: true, clientX: {x}, clientY: {y}, bubbles: true, cancelable: true }}))""")
            most = settled(driver)
            check(f"{name}: {item['path']} ctrl+wheel stops at max {zoom['max']}",
                  most is not None and near(most[2], zoom["max"], slide_width), ratio(most, slide_width))
            # There the browser has taken the rendition of the srcset (the zoom ladder's) that is
            # sharp: at least one of its pixels per device pixel, or the largest the item has. (With
            # `w` descriptors naturalWidth is scaled to `sizes`: the file's width is the manifest's.)
            if not original and most is not None:
                widths = {base.rstrip("/") + "/photos/" + item["thumbnails"][n]["path"]: item["thumbnails"][n]["width"] for n in srcset}
                largest = max(widths.values())
                taken = None
                for _ in range(100):
                    taken = driver.execute_script("""
                        const holder = document.querySelector('.pswp__item[aria-hidden="false"]');
                        const img = holder && holder.querySelector('img.pswp__img:not(.pswp__img--placeholder)');
                        return img && img.complete ? [img.currentSrc, img.getBoundingClientRect().width * devicePixelRatio] : null;""")
                    if taken and taken[0] in widths and (widths[taken[0]] >= taken[1] - 1 or widths[taken[0]] == largest):
                        break
                    time.sleep(0.1)
                width = widths.get(taken[0]) if taken else None
                check(f"{name}: {item['path']} at max zoom loads a sharp rendition of the srcset",
                      width is not None and (width >= taken[1] - 1 or width == largest), f"{width} px file, {taken}")
            webdriver.ActionChains(driver).send_keys("\ue00c").perform()  # Escape
            closed = wait(driver, "return !document.querySelector('.pswp')", 5)
            if not closed:
                check(f"{name}: Escape closes PhotoSwipe", False)
                break
    finally:
        driver.quit()

server.shutdown()
shutil.rmtree(site)
check.finish()
