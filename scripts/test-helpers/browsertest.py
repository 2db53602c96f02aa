"""Shared by the browser tests (viewer-test.py, photoswipe-test.py): headless Chromium driven by
Selenium, a static server on 127.0.0.1, and the check/report convention (one line per check,
`N passed, M failed`, exit 1 on a failure, 77 when Chromium, its driver or Selenium is missing)."""
import functools
import json
import http.server
import os
import sys
import threading
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
except ImportError:
    print("browser test: Python's selenium is missing")
    sys.exit(77)

CHROMIUM = next((p for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] if os.path.exists(p)), None)
DRIVER = next((p for p in ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"] if os.path.exists(p)), None)
if not CHROMIUM or not DRIVER:
    print("browser test: chromium or chromium-driver is missing")
    sys.exit(77)


def arguments(usage, minimum):
    """Prints USAGE (the script's docstring) and exits: 0 when asked with -h or --help, 64 when
    the script was given fewer than MINIMUM arguments."""
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    if asked or len(sys.argv) <= minimum:
        (sys.stdout if asked else sys.stderr).write(usage)
        sys.exit(0 if asked else 64)


def start(usage):
    """The start of a browser test run as `SCRIPT OUT_DIR ARTIFACT_DIR`: its arguments checked
    (`arguments`), ARTIFACT_DIR made, OUT_DIR served. Returns (out_dir, artifacts, base URL,
    server, manifest, items, Checks())."""
    arguments(usage, 2)
    out_dir, artifacts = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(artifacts, exist_ok=True)
    base, server = serve(out_dir)
    manifest, items = manifest_items(out_dir)
    return out_dir, artifacts, base, server, manifest, items, Checks()


def serve(directory, delayed_prefix=None, delay=0.0):
    """Serves DIRECTORY on 127.0.0.1, a file's .br or .gz sibling where the browser accepts it
    (as a static host does); requests under DELAYED_PREFIX are answered after DELAY s.
    Returns (base URL, server); server.requests lists (path, bytes sent) of every request."""

    requests = []  # (path, bytes of the file answered), in the order they came

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            local = self.translate_path(self.path)
            # A pre-compressed sibling the browser accepts, as nginx's gzip_static/brotli_static
            # and Caddy's precompressed send it (Chromium asks for br over HTTPS only: gzip here).
            accepted = self.headers.get("Accept-Encoding", "")
            for suffix, encoding in ((".br", "br"), (".gz", "gzip")):
                if encoding in accepted and os.path.isfile(local) and os.path.isfile(local + suffix):
                    body = open(local + suffix, "rb").read()
                    requests.append((self.path.split("?")[0], len(body)))
                    self.send_response(200)
                    self.send_header("Content-Type", self.guess_type(local))
                    self.send_header("Content-Encoding", encoding)
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Vary", "Accept-Encoding")
                    self.end_headers()
                    self.wfile.write(body)
                    return
            requests.append((self.path.split("?")[0], os.path.getsize(local) if os.path.isfile(local) else 0))
            if delayed_prefix and self.path.startswith(delayed_prefix):
                time.sleep(delay)
            super().do_GET()

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # a browser that navigates away drops delayed answers: a broken pipe, not a failure

    server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=directory))
    server.requests = requests
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


def browser(width, height, extra=()):
    """Headless Chromium whose window (CSS px, scale 1) is WIDTH x HEIGHT; EXTRA: more switches."""
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     "--allow-file-access-from-files", "--disable-dev-shm-usage", *extra]:
        options.add_argument(argument)
    options.binary_location = CHROMIUM
    # Return at DOMContentLoaded: the load event would wait for delayed images.
    options.page_load_strategy = "eager"
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    return driver


def wait(driver, script, timeout=10):
    """Runs SCRIPT until it returns something truthy (or TIMEOUT s pass); returns its last value."""
    end = time.time() + timeout
    while time.time() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    return driver.execute_script(script)


class Checks:
    def __init__(self):
        self.results = []

    def __call__(self, name, ok, detail=""):
        self.results.append(bool(ok))
        print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail else ""))

    def finish(self):
        failed = self.results.count(False)
        print(f"{len(self.results) - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)


def manifest_items(out_dir):
    """OUT_DIR's manifest and all its items in flat-index order (sections, then pages)."""
    manifest = json.load(open(os.path.join(out_dir, "manifest.json")))
    items = []
    for section in manifest["sections"]:
        for page in section["pages"]:
            items.extend(json.load(open(os.path.join(out_dir, page["path"])))["items"])
    return manifest, items


def violations(driver):
    """What axe-core (the copy axe-selenium-python ships) finds on the page: (rule, nodes)."""
    from axe_selenium_python import Axe
    audit = Axe(driver)
    audit.inject()
    return [(v["id"], len(v["nodes"]), [node["html"][:160] for node in v["nodes"]]) for v in audit.run()["violations"]]
