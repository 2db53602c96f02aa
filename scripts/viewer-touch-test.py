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
  - after turning the phone (844x390) the grid is laid out again for the new width (full rows
    span it) and the open lightbox takes the manifest's phone-landscape frame.
Saves screenshots into ARTIFACT_DIR. Prints one line per check and `N passed, M failed`; exits 1
on a failure, 77 when Chromium, its driver or Selenium is missing.
"""
import os
import sys
import time

from browsertest import Checks, browser, manifest_items, serve, wait
from selenium import webdriver

out_dir, artifacts = os.path.abspath(sys.argv[1]), sys.argv[2]
os.makedirs(artifacts, exist_ok=True)
base, server = serve(out_dir)
manifest, items = manifest_items(out_dir)
check = Checks()


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
        const pages = [...document.querySelectorAll('.tf-page')].map((p) => [...p.querySelectorAll('.tf-row')].map(span));
        const spans = pages.flat();
        return innerWidth === 844 && spans.length > 0 && pages.every((rows) => rows.slice(0, -1).every((s) => Math.abs(s - width) <= 2))
          && spans.every((s) => s <= width + 2) && Math.abs(Math.max(...spans) - width) <= 2 && [width, pages];""", 3)
    check("rotation: the grid is laid out again for the new width (its widest rows span it)", rows, str(rows))
    driver.save_screenshot(os.path.join(artifacts, "touch-rotated.png"))
finally:
    driver.quit()
server.shutdown()
check.finish()
