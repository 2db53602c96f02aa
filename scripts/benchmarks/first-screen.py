#!/usr/bin/env python3
"""What a gallery's first phone screen costs over a throttled network, side by side: headless
Chromium as a 390x844 phone (scale 3), its network throttled by CDP
Network.emulateNetworkConditions as DevTools' presets (slow 4G: 562.5 ms, 1.44 Mb/s down; fast
4G: 165 ms, 8.1 Mb/s), cache off, each site served from its own static server: Caddy (Debian's
caddy) over HTTPS and HTTP/2 with `precompressed br gzip` and, for a file without a sibling,
`encode gzip zstd` (both sides compressed, as a static host serves them; every request of a
screen in one connection); without caddy, Python's HTTP/1.1 server sending .gz
siblings (six connections: a screen of 30 images takes five round trips, whoever serves it).

Usage: python3 first-screen.py [--runs N] LABEL=DIR:PAGE ...
  e.g. first-screen.py thumbframe=out/thumbframe:index.html sigal=out/sigal:album-00/index.html

Per site and network, the median of N runs (3) of: requests and bytes transferred until every
image in view is complete, first contentful paint, largest contentful paint, and the moment every
image in view is complete (the first screen's images; no image in view counts as not complete).
A measurement for the README and docs/performance.md, not a test: the browser tests assert the
byte budgets, not times.
"""
import sys

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

# browsertest, the browser tests' harness, is in scripts/test-helpers.
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test-helpers"))

import shutil
import statistics
import time

from browsertest import browser, serve

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from throttled import NETWORKS, caddy

arguments = sys.argv[1:]
runs = 3
if arguments[:1] == ["--runs"]:
    runs, arguments = int(arguments[1]), arguments[2:]
sites = []
for argument in arguments:
    label, _, rest = argument.partition("=")
    directory, _, page = rest.rpartition(":")
    if not label or not directory or not os.path.isfile(os.path.join(directory, page)):
        sys.exit(f"first-screen: {argument}: expected LABEL=DIR:PAGE with DIR/PAGE a file")
    sites.append((label, os.path.abspath(directory), page))

# Runs in the page from its first byte: paint timings, and on every frame whether every image
# in view is complete (the first frame it is, kept unless an image in view stops being so).
PROBE = """
performance.setResourceTimingBufferSize(100000);
window.__screen = { fcp: 0, lcp: 0, done: 0 };
new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.name === "first-contentful-paint") __screen.fcp = e.startTime; })
  .observe({ type: "paint", buffered: true });
new PerformanceObserver((list) => { for (const e of list.getEntries()) __screen.lcp = e.startTime; })
  .observe({ type: "largest-contentful-paint", buffered: true });
(function frame() {
  const shown = [...document.images].filter((image) => {
    const r = image.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
  });
  const complete = shown.length > 0 && shown.every((image) => image.complete && image.naturalWidth > 0);
  if (!complete) __screen.done = 0;
  else if (!__screen.done) { __screen.done = performance.now(); __screen.images = shown.length; }
  requestAnimationFrame(frame);
})();
"""

# What was fetched by the time the screen was complete (the document and every resource that
# ended by then), from Resource Timing: transferred bytes (headers included, as sent).
RESULT = """
const done = __screen.done;
const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]
  .filter((e) => e.responseEnd <= done);
return { done, fcp: __screen.fcp, lcp: __screen.lcp, images: __screen.images || 0, requests: entries.length,
  bytes: entries.reduce((sum, e) => sum + e.transferSize, 0) };
"""


def python_server(directory):
    base, server = serve(directory)
    return base, server.shutdown


def measure(base, page, network):
    driver = browser(390, 844, ["--ignore-certificate-errors"])
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, **NETWORKS[network]})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        # Navigated without waiting for the page's load (a gallery of 500 images takes long).
        driver.execute_cdp_cmd("Page.navigate", {"url": base + page})
        # Complete, and still complete a second later (an image that came into view since undoes it).
        end, settled = time.time() + 120, None
        while time.time() < end:
            done = driver.execute_script("return window.__screen && __screen.done")
            if done and settled == done and time.time() - seen > 1:
                break
            if done != settled:
                settled, seen = done, time.time()
            time.sleep(0.1)
        return driver.execute_script(RESULT)
    finally:
        driver.quit()


def attempt(base, page, network):
    """measure, once more when the browser stops answering (a page of 500 images on a busy
    machine can hold chromedriver past its 120 s)."""
    try:
        return measure(base, page, network)
    except Exception as error:  # selenium's and urllib3's timeouts alike
        print(f"(again: {type(error).__name__})", file=sys.stderr, flush=True)
        return measure(base, page, network)


start = caddy if shutil.which("caddy") else python_server
servers = {label: start(directory) for label, directory, _ in sites}
served = "Caddy, HTTPS, HTTP/2" if start is caddy else "Python's server, HTTP/1.1 (no caddy)"
print(f"first phone screen (390x844 at 3x), {served}, median of {runs}; bytes and requests until its images are complete")
print(f"{'':10} {'site':12} {'requests':>8} {'KB':>8} {'FCP s':>7} {'LCP s':>7} {'images s':>9} {'in view':>8}")
for network in NETWORKS:
    for label, directory, page in sites:
        base, _ = servers[label]
        results = [attempt(base, page, network) for _ in range(runs)]
        median = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(f"{network:10} {label:12} {median['requests']:8.0f} {median['bytes'] / 1000:8.1f} {median['fcp'] / 1000:7.2f} "
              f"{median['lcp'] / 1000:7.2f} {median['done'] / 1000:9.2f} {median['images']:8.0f}", flush=True)
for _, stop in servers.values():
    stop()
