#!/usr/bin/env python3
"""The web viewer's timeline on a phone: headless Chromium as a 390x844 phone (scale 3) over
DevTools' slow 4G (562.5 ms, 1.44 Mb/s), cache off, OUT_DIR served by Caddy (HTTP/2, its
pre-compressed siblings). Measures, for a build made with --viewer:
  - the first paint, and the moment the grid is laid out (the whole library's height set): what
    was transferred (compressed) by then, and the requests;
  - the page's scroll height: every change once the grid is laid out, and the layout shift
    (CLS, the sum of layout-shift entries) over the whole run;
  - a fling: 6 s scrolling down at 4 000 px/s in animation frames, then back up: the most
    images and cells in the page at once, and the long tasks (over 50 ms) meanwhile;
  - the scrubber: a press on its track at 8 months spread over the library (CDP mouse events
    at the mark's place), and the time until every cell in view is drawn (no pending box: its
    placeholder painted) and until every image in view is complete; and the scroll position
    1.5 s later (a correction would move it).
A measurement for docs/performance.md, not a test.

Usage: python3 timeline.py OUT_DIR
"""
import os
import sys

if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test-helpers"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import time

from browsertest import browser
from throttled import NETWORKS, caddy

PROBE = """
performance.setResourceTimingBufferSize(100000);
window.__t = { fcp: 0, ready: 0, cls: 0, heights: [], long: [], maxImages: 0, maxCells: 0 };
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.name === 'first-contentful-paint') __t.fcp = e.startTime; })
  .observe({ type: 'paint', buffered: true });
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) __t.cls += e.value; })
  .observe({ type: 'layout-shift', buffered: true });
new PerformanceObserver((l) => { for (const e of l.getEntries()) __t.long.push([e.startTime, e.duration]); })
  .observe({ type: 'longtask', buffered: true });
(function frame() {
  if (document.body && document.body.dataset.ready && !__t.ready) __t.ready = performance.now();
  if (document.body && document.body.dataset.ready) {
    const h = document.documentElement.scrollHeight, last = __t.heights[__t.heights.length - 1];
    if (!last || last[1] !== h) __t.heights.push([performance.now(), h]);
  }
  __t.maxImages = Math.max(__t.maxImages, document.images.length);
  __t.maxCells = Math.max(__t.maxCells, document.querySelectorAll('.tf-cell').length);
  requestAnimationFrame(frame);
})();
"""

FLING = """
const done = arguments[0];
const start = performance.now(), longBefore = __t.long.length;
let last = start;
(function step(now) {
  const t = now - start;
  if (t > 12000) return done({ long: __t.long.slice(longBefore) });
  scrollBy(0, (t < 6000 ? 4 : -4) * (now - last));
  last = now;
  requestAnimationFrame(step);
})(start);
"""

VIEW = """
const cells = [...document.querySelectorAll('.tf-cell')].filter((c) => {
  const r = c.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
const drawn = cells.length > 0 && cells.every((c) => !c.classList.contains('tf-pending') && c.dataset.placeholder === 'painted');
const images = drawn && cells.every((c) => { const i = c.querySelector('img'); return i.complete && i.naturalWidth > 0; });
return [drawn, images, scrollY];
"""


def main(out_dir):
    base, stop = caddy(os.path.abspath(out_dir))
    driver = browser(390, 844, ["--ignore-certificate-errors"])
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, **NETWORKS["slow 4G"]})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        driver.set_script_timeout(60)
        driver.get(base + "index.html")
        end = time.time() + 60
        while time.time() < end and not driver.execute_script("return document.body && document.body.dataset.ready"):
            time.sleep(0.1)
        time.sleep(3)
        first = driver.execute_script("""const ready = __t.ready;
            const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
              .filter((e) => e.responseEnd <= ready);
            return { fcp: __t.fcp, ready, requests: entries.length, bytes: entries.reduce((s, e) => s + e.transferSize, 0),
              names: entries.map((e) => e.name.split('/').pop()),
              height: document.documentElement.scrollHeight, items: thumbframeViewer.marks().length };""")
        print(f"first paint {first['fcp'] / 1000:.2f} s; the grid laid out at {first['ready'] / 1000:.2f} s after "
              f"{first['requests']} requests ({', '.join(first['names'])}), {first['bytes'] / 1000:.1f} KB transferred; "
              f"page {first['height']} px tall, {first['items']} scrubber marks")
        fling = driver.execute_async_script(FLING)
        long = [d for _, d in fling["long"]]
        probe = driver.execute_script("return __t")
        print(f"fling (6 s down at 4 000 px/s, 6 s up): at most {probe['maxImages']} images and {probe['maxCells']} cells in the page; "
              f"{len(long)} long tasks (longest {max(long, default=0):.0f} ms)")
        marks = driver.execute_script("return thumbframeViewer.marks()")
        track = driver.execute_script("const r = document.getElementById('tf-scrubber').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]")
        drawn_times, image_times, moved = [], [], []
        for k in range(8):
            mark = marks[(k * 7 + 3) * len(marks) // 57 % len(marks)]
            maximum = driver.execute_script("return Math.max(1, document.documentElement.scrollHeight - innerHeight)")
            y = track[1] + min(1, max(0, (mark["y"] - 8) / maximum)) * track[3]
            x = track[0] + track[2] / 2
            started = time.time()
            for kind in ("mousePressed", "mouseReleased"):
                driver.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})
            at = driver.execute_script("return scrollY")
            drawn = images = None
            while time.time() - started < 20:
                state = driver.execute_script(VIEW)
                if state[0] and drawn is None:
                    drawn = time.time() - started
                if state[1]:
                    images = time.time() - started
                    break
                time.sleep(0.02)
            time.sleep(1.5)
            moved.append(abs(driver.execute_script("return scrollY") - at))
            drawn_times.append(drawn if drawn is not None else float("inf"))
            image_times.append(images if images is not None else float("inf"))
            print(f"  scrubber to {mark['label']}: cells drawn {drawn_times[-1]:.2f} s, images complete {image_times[-1]:.2f} s", flush=True)
        probe = driver.execute_script("return __t")
        changes = probe["heights"][1:]
        corrections = sum(abs(b[1] - a[1]) for a, b in zip(probe["heights"], changes))
        print(f"scrubber: cells drawn in at most {max(drawn_times):.2f} s, images complete in at most {max(image_times):.2f} s; "
              f"the view moved {max(moved):.0f} px after a jump")
        print(f"scroll height: {len(changes)} changes once the grid was laid out, {corrections:.0f} px in all; CLS {probe['cls']:.4f}")
    finally:
        driver.quit()
        stop()


main(sys.argv[1])
