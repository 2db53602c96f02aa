#!/usr/bin/env python3
"""The web viewer on a touch screen and a keyboard: headless Chromium with touch emulation, real
touch events through the DevTools protocol (Input.dispatchTouchEvent), driven by Selenium.

Usage: python3 viewer-touch-test.py OUT_DIR ARTIFACT_DIR
OUT_DIR holds a --viewer build of the sample library (scripts/sample-library). Serves it on
127.0.0.1, loads index.html at 390x844 with touch, and checks:
  - pulling a photo down with a finger dismisses the lightbox; a pull the browser cancels
    (touchcancel) leaves nothing shrunk or dimmed;
  - a double tap zooms in and a second one zooms out, as double clicks do;
  - `+` zooms in, `-` zooms out down to the fitted frame and does nothing there;
  - PageDown, ArrowDown and Home scroll a long image;
  - an open photo is #its path, one history entry however far it pages: Back closes it; an
    address with #path opens that photo, and closing it stays on the grid;
  - Tab keeps the focus in the open lightbox; the caption is at least 4.5:1 against its bar over
    a white photo; one h1 and a page title naming the library; the photo and its cell described;
  - after turning the phone (844x390) the grid is laid out again for the new width (full rows
    span it) and the open lightbox takes the manifest's phone-landscape frame.
Saves screenshots into ARTIFACT_DIR. Prints one line per check and `N passed, M failed`; exits 1
on a failure, 77 when Chromium, its driver or Selenium is missing.
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before anything is imported, fetched or written
    print(__doc__.strip())
    sys.exit(0)

import json
import os
import time
from urllib.parse import quote

from browsertest import browser, start, wait
from selenium import webdriver

out_dir, artifacts, base, server, manifest, items, check = start(__doc__)


def touch(driver, kind, points):
    driver.execute_cdp_cmd("Input.dispatchTouchEvent",
                           {"type": kind, "touchPoints": [{"x": x, "y": y, "id": n} for n, (x, y) in enumerate(points)]})


def pull(driver, x, y, dx, dy, end="touchEnd", steps=12):
    touch(driver, "touchStart", [(x, y)])
    for step in range(1, steps + 1):
        touch(driver, "touchMove", [(x + dx * step / steps, y + dy * step / steps)])
        time.sleep(0.01)
    if end == "touchCancel":
        return
    touch(driver, end, [])


def tap(driver, x, y):
    touch(driver, "touchStart", [(x, y)])
    touch(driver, "touchEnd", [])


def lightbox(driver, index):
    driver.execute_script(f"return thumbframeViewer.open({index})")
    wait(driver, "return !document.getElementById('tf-lightbox').hidden")


def state(driver):
    return driver.execute_script("""return {hidden: document.getElementById('tf-lightbox').hidden, zoom: thumbframeViewer.zoom(),
        transform: document.getElementById('tf-image').style.transform, mask: document.getElementById('tf-mask').style.opacity,
        top: document.getElementById('tf-scroll').scrollTop};""")


def key(driver, keys):
    webdriver.ActionChains(driver).send_keys(keys).perform()


photo = next(i for i, item in enumerate(items) if not item["layouts"]["phone"]["long"] and item["image"]["width"] > 1000)
long_index = next(i for i, item in enumerate(items) if item["layouts"]["phone"]["long"])
driver = browser(390, 844)
try:
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    driver.get(base + "index.html")
    check("page ready", wait(driver, "return document.body.dataset.ready") == "true")

    lightbox(driver, photo)
    pull(driver, 195, 420, 10, 320)
    closed = wait(driver, "return document.getElementById('tf-lightbox').hidden", 3)
    check("touch: pulling the photo down dismisses the lightbox", closed, str(state(driver)))

    lightbox(driver, photo)
    pull(driver, 195, 420, 0, 200, end="touchCancel")
    shrunk = state(driver)
    touch(driver, "touchCancel", [])
    after = wait(driver, "return document.getElementById('tf-image').style.transform === '' && document.getElementById('tf-mask').style.opacity === '1'", 2)
    check("touch: a pull the browser cancels leaves nothing shrunk or dimmed",
          "scale" in shrunk["transform"] and after and not state(driver)["hidden"], f"{shrunk} -> {state(driver)}")

    tap(driver, 195, 420)
    tap(driver, 195, 420)
    zoomed = wait(driver, "return thumbframeViewer.zoom() > 1 && thumbframeViewer.zoom()", 2)
    time.sleep(0.4)  # not a third tap of the same double tap
    tap(driver, 195, 420)
    tap(driver, 195, 420)
    fitted = wait(driver, "return thumbframeViewer.zoom() === 1", 2)
    check("touch: a double tap zooms in, another zooms out", zoomed and fitted, f"{zoomed}, then {state(driver)['zoom']}")
    driver.save_screenshot(os.path.join(artifacts, "touch-photo.png"))

    key(driver, "+")
    plus = state(driver)["zoom"]
    key(driver, "-")
    key(driver, "-")
    key(driver, "-")
    minus = state(driver)["zoom"]
    key(driver, "-")
    check("keys: + zooms in, - zooms out to the fitted frame and no further", plus > 1 and minus == 1 and state(driver)["zoom"] == 1,
          f"+ {plus}, - {minus}, - {state(driver)['zoom']}")

    lightbox(driver, long_index)
    key(driver, webdriver.Keys.PAGE_DOWN)
    page = state(driver)["top"]
    key(driver, webdriver.Keys.ARROW_DOWN)
    arrow = state(driver)["top"]
    key(driver, webdriver.Keys.HOME)
    check("keys: PageDown, ArrowDown and Home scroll a long image", 0 < page < arrow and state(driver)["top"] == 0,
          f"{page}, {arrow}, {state(driver)['top']}")

    # Deep links and Back: an open photo is #its path; Back closes the lightbox however far it paged.
    driver.execute_script("thumbframeViewer.close()")
    wait(driver, "return document.getElementById('tf-lightbox').hidden && !location.hash", 2)
    lightbox(driver, photo)
    driver.execute_script("return thumbframeViewer.show(%d)" % (photo + 1))
    linked = wait(driver, "return location.hash", 2)
    driver.back()
    back = wait(driver, "return document.getElementById('tf-lightbox').hidden && !location.hash && location.pathname", 3)
    check("links: a paged lightbox is one history entry, #its path; Back closes it",
          linked == "#" + quote(items[photo + 1]["path"]) and back, f"{linked}, {back}")
    target = items[-1]
    driver.get(base + "index.html#" + quote(target["path"]))
    opened = wait(driver, f"""return !document.getElementById('tf-lightbox').hidden &&
        document.getElementById('tf-caption').textContent.includes({json.dumps(target['path'])})""", 5)
    driver.find_element("id", "tf-close").click()
    stayed = wait(driver, "return document.getElementById('tf-lightbox').hidden && document.body.dataset.ready === 'true' && location.href", 3)
    check("links: an address with #path opens that photo; closing it stays on the grid", opened and stayed == base + "index.html",
          f"{opened}, {stayed}")
    # Every error the page throws, from its first script on.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """window.pageErrors = [];
        addEventListener('error', (e) => pageErrors.push(String(e.message)));
        addEventListener('unhandledrejection', (e) => pageErrors.push(String(e.reason)));"""})
    driver.get("about:blank")  # a new document, not a jump within this one
    driver.get(base + "index.html#%E0%A4%A")
    ready = wait(driver, "return document.body.dataset.ready === 'true'", 3)
    time.sleep(0.3)
    broken = driver.execute_script("return [document.getElementById('tf-lightbox').hidden, window.pageErrors]")
    check("links: a malformed #hash opens nothing and throws nothing", ready and broken == [True, []], str(broken))

    # Focus stays in the open lightbox; the caption is legible on any photo; one h1; a title.
    lightbox(driver, photo)
    inside = []
    for _ in range(8):
        key(driver, webdriver.Keys.TAB)
        inside.append(driver.execute_script("return document.getElementById('tf-lightbox').contains(document.activeElement)"))
    check("a11y: Tab keeps the focus inside the open lightbox", all(inside), str(inside))
    # The bar's worst case: its white text over its translucent black over a white photo.
    contrast = driver.execute_script("""
        const bar = getComputedStyle(document.getElementById('tf-bar')), text = getComputedStyle(document.getElementById('tf-caption'));
        const rgba = (c) => c.match(/[0-9.]+/g).map(Number);
        const [r, g, b, a = 1] = rgba(bar.backgroundColor), [tr, tg, tb] = rgba(text.color);
        const over = (v) => v * a + 255 * (1 - a);
        const lum = (c) => { const s = c.map((v) => v / 255).map((v) => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
          return 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2]; };
        const l1 = lum([tr, tg, tb]), l2 = lum([over(r), over(g), over(b)]);
        return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);""")
    check("a11y: the caption is at least 4.5:1 against its bar over a white photo", contrast >= 4.5, f"{contrast:.2f}:1")
    names = driver.execute_script("""return [document.querySelectorAll('h1').length, document.querySelector('h1').textContent, document.title,
        document.getElementById('tf-image').alt, document.querySelector('.tf-cell').getAttribute('aria-label')]""")
    root = next((s["title"] for s in manifest["sections"] if s["name"] == "."), None)
    check("a11y: one h1 and a page title naming the library; the photo and its cell described",
          names[0] == 1 and names[1] == root and names[2].startswith(root) and items[photo]["path"] in names[3] and names[4],
          str(names))
    driver.execute_script("thumbframeViewer.close()")

    # Turning the phone: the grid's rows and the open lightbox follow.
    lightbox(driver, photo)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 844, "height": 390, "deviceScaleFactor": 1, "mobile": True})
    frame = items[photo]["layouts"]["phone-landscape"]["frame"]
    rect = wait(driver, f"""const r = document.getElementById('tf-image').getBoundingClientRect();
        return innerWidth === 844 && Math.abs(r.width - {frame['width']}) <= 1 && [r.x, r.y, r.width, r.height];""", 3)
    check("rotation: the open lightbox takes the manifest's phone-landscape frame",
          rect and all(abs(a - b) <= 1 for a, b in zip(rect, [frame["x"], frame["y"], frame["width"], frame["height"]])),
          f"{rect} vs {frame}")
    driver.execute_script("thumbframeViewer.close()")
    # A page's rows but its last fill the width exactly; its last fills it or stops short (a
    # shorter row at most the target height). Laid out for 390 px, none would reach 836.
    rows = wait(driver, """const width = document.getElementById('tf-grid').clientWidth - 8;
        const span = (r) => { const c = [...r.children].map((e) => e.getBoundingClientRect()); return c[c.length - 1].right - c[0].left; };
        const groups = {};
        for (const r of [...document.querySelectorAll('.tf-row')].sort((a, b) => a.offsetTop - b.offsetTop))
          (groups[r.dataset.section + ':' + r.dataset.page] ||= []).push(span(r));
        const pages = Object.values(groups);
        const spans = pages.flat();
        return innerWidth === 844 && spans.length > 0 && pages.every((rows) => rows.slice(0, -1).every((s) => Math.abs(s - width) <= 2))
          && spans.every((s) => s <= width + 2) && Math.abs(Math.max(...spans) - width) <= 2 && [width, pages];""", 3)
    check("rotation: the grid is laid out again for the new width (its widest rows span it)", rows, str(rows))
    driver.save_screenshot(os.path.join(artifacts, "touch-rotated.png"))
finally:
    driver.quit()
server.shutdown()
check.finish()
