#!/usr/bin/env python3
"""The web viewer's media kinds in a real browser: headless Chromium driven by Selenium.

Usage: python3 viewer-media-test.py OUT_DIR ARTIFACT_DIR
OUT_DIR holds a --viewer build of a mixed library made with `--original-url originals/`, and
OUT_DIR/originals leads to the source directory. Serves OUT_DIR on 127.0.0.1, loads index.html
at 390x844 and checks:
  - every video's grid cell shows its duration, an animated image's its format, a Live or
    Motion Photo's LIVE, a JPEG shown in place of its RAW RAW;
  - a RAW + JPEG pair's lightbox offers the RAW original to download;
  - a still's lightbox shows its original where browsers decode its format (settings.browserFormats),
    else the thumbnail its zoom ladder names for the fitted photo (a TIFF);
  - every video opens in a native <video> at the manifest's frame (to 1 px), its poster the
    display thumbnail and its sources the original where this browser plays it and the
    rendition where there is one, nothing over its bottom (its controls), and plays (currentTime
    advances, no media error); a seek shows its scrub sprite's tile for that time, gone when the
    seek ends; a mouse over its timeline previews the time under it, the tile following it;
  - a Live Photo's and a Motion Photo's motion plays while the pointer is on its cell and is
    gone when it leaves; in the lightbox, the LIVE button plays it over the photo.
Saves screenshots into ARTIFACT_DIR. Prints one line per check and `N passed, M failed`; exits 1
on a failure, 77 when Chromium, its driver or Selenium is missing.
"""
import sys

if sys.argv[1:2] in (["-h"], ["--help"]):  # before anything is imported, fetched or written
    print(__doc__.strip())
    sys.exit(0)

import os
from urllib.parse import quote

from browsertest import browser, start, wait
from selenium import webdriver

out_dir, artifacts, base, server, manifest, items, check = start(__doc__)


def clock(seconds):
    s = max(0, round(seconds))
    return f"{s // 60}:{s % 60:02d}"


driver = browser(390, 844)
try:
    driver.get(base + "index.html")
    check("page ready", wait(driver, "return document.body.dataset.ready") == "true")
    # Every page rendered, so every cell is there to look at.
    driver.execute_script("scrollTo(0, document.body.scrollHeight)")
    wait(driver, f"return document.querySelectorAll('.tf-cell').length === {len(items)}", 5)
    badges = driver.execute_script("""
        const out = {};
        for (const cell of document.querySelectorAll('.tf-cell')) {
          const badge = cell.querySelector('.tf-badge');
          out[cell.dataset.path] = badge ? badge.textContent : null;
        }
        return out;""")
    for item in items:
        expected = (clock(item["video"]["duration"]) if item["kind"] == "video"
                    else item["image"]["format"].upper() if item["kind"] == "animated"
                    else "LIVE" if "motion" in item
                    else "RAW" if "rawFile" in item else None)
        check(f"grid: {item['path']} is marked {expected}", badges.get(item["path"]) == expected, f"{badges.get(item['path'])}")
    driver.save_screenshot(os.path.join(artifacts, "media-grid.png"))

    # A still's lightbox loads its original where browsers decode the format, else the display
    # thumbnail (a TIFF or HEIC original would be a broken image), and the picture decodes.
    for index, item in enumerate(items):
        if item["kind"] == "video":
            continue
        original = item["image"]["format"] in manifest["settings"].get("browserFormats", [])
        # Not the original: the rendition the zoom ladder names for the fitted photo on this screen
        # (the phone viewport's natives are for its scale 3; this browser's is 1, where a rendition
        # may stretch by 1.25), else the display one.
        ladder = item["layouts"]["phone"].get("ladder")
        zoom, scale = item["layouts"]["phone"]["zoom"], next(v["scale"] for v in manifest["settings"]["viewports"] if v["name"] == "phone")
        rendition = (next((r["name"] for r in ladder if r["native"] / zoom["min"] * scale * 1.25 >= 1 - 1e-4), ladder[-1]["name"])
                     if ladder else manifest["settings"]["display"])
        wanted = ("originals/" + item["path"]) if original else item["thumbnails"][rendition]["path"]
        state = driver.execute_script(f"""
            return thumbframeViewer.open({index}).then(() => new Promise((done) => {{
              const image = document.getElementById('tf-image');
              const answer = () => done([image.src, image.naturalWidth]);
              if (image.complete) answer(); else {{ image.onload = answer; image.onerror = answer; }} }}));""")
        check(f"lightbox: {item['path']} ({item['image']['format']}) shows {'its original' if original else 'the thumbnail its ladder names'}",
              state[0].endswith(quote(wanted)) and state[1] > 0, f"{state}")

    for index, item in enumerate(items):
        if "rawFile" not in item:
            continue
        link = driver.execute_script(f"""
            return thumbframeViewer.open({index}).then(() => {{
              const a = document.getElementById('tf-raw');
              return [a.hidden, a.href, a.hasAttribute('download'), a.getBoundingClientRect().width,
                      document.getElementById('tf-caption').textContent]; }});""")
        check(f"lightbox: {item['path']} offers its RAW {item['rawFile']['original']} to download",
              not link[0] and link[1].endswith("originals/" + item["rawFile"]["original"]) and link[2] and link[3] > 0
              and "RAW + JPEG" in link[4], f"{link}")
        driver.save_screenshot(os.path.join(artifacts, f"media-raw-{index}.png"))

    for index, item in enumerate(items):
        if item["kind"] != "video":
            continue
        # What this browser says of the original before fetching it; one it cannot play is
        # its poster and a sentence saying so, never a greyed player.
        plays = driver.execute_script(f"""
            return thumbframeViewer.open({index}).then(() => {{
              const n = document.getElementById('tf-note');
              return n.hidden; }});""")
        if not plays:
            state = driver.execute_script("""
                const n = document.getElementById('tf-note'), v = document.getElementById('tf-video');
                const i = document.getElementById('tf-image'), a = n.querySelector('a');
                return [n.textContent, v.hidden, i.hidden, a ? a.getAttribute('href') : null,
                        document.createElement('video').canPlayType('video/mp4; codecs="hvc1.1.6.L93.B0"')];""")
            check(f"lightbox: {item['path']} ({item['video']['codec']}) says in words it does not play here, poster shown",
                  "does not play in this browser" in state[0] and state[1] and not state[2]
                  and (state[3] or "").endswith("originals/" + item["path"]), f"{state}")
            driver.save_screenshot(os.path.join(artifacts, f"media-video-{index}-note.png"))
            continue
        frame = item["layouts"]["phone"]["frame"]
        state = driver.execute_script(f"""
            return thumbframeViewer.open({index}).then(() => {{
              const v = document.getElementById('tf-video'), r = v.getBoundingClientRect();
              return [r.x, r.y, r.width, r.height, v.hidden, document.getElementById('tf-image').hidden, v.poster,
                      [...v.querySelectorAll('source')].map((s) => s.getAttribute('src'))]; }});""")
        expected = [frame["x"], frame["y"], frame["width"], frame["height"]]
        check(f"lightbox: {item['path']} in a <video> at the manifest's frame",
              not state[4] and state[5] and all(abs(a - b) <= 1 for a, b in zip(state[:4], expected)), f"{state[:6]} vs {expected}")
        # Its controls are reachable: nothing (the caption bar) lies over the bottom of the video.
        top = driver.execute_script("""const v = document.getElementById('tf-video'), r = v.getBoundingClientRect();
            const e = document.elementFromPoint(r.x + r.width / 2, Math.min(innerHeight, r.bottom) - 8); return e && (e.id || e.tagName)""")
        check(f"lightbox: {item['path']}'s timeline is not under the caption bar", top == "tf-video", f"{top}")
        poster = item["thumbnails"][manifest["settings"]["display"]]["path"]
        # The <source> list: the original where this browser plays it, the rendition where it
        # has one (first when the original is only to be remuxed).
        video = item["video"]
        rendition = video.get("rendition")
        own_type = f'video/mp4; codecs="{video["codecs"]}"' if video.get("codecs") else None
        original_plays = video["playable"] or bool(own_type and driver.execute_script(
            "return document.createElement('video').canPlayType(arguments[0])", own_type))
        expected_sources = [s for s in ([rendition and rendition["path"], original_plays and "originals/" + item["path"]]
                                        if video["delivery"] == "remux" else
                                        [original_plays and "originals/" + item["path"], rendition and rendition["path"]]) if s]
        check(f"lightbox: {item['path']}'s poster first, then {' or '.join(expected_sources)} ({video['delivery']})",
              state[6].endswith(poster) and len(state[7]) == len(expected_sources)
              and all(a.endswith(b) for a, b in zip(state[7], expected_sources)), f"{state[6]} {state[7]}")
        played = driver.execute_script("""
            const v = document.getElementById('tf-video'); v.muted = true;
            return v.play().then(() => true, (e) => String(e));""")
        time = wait(driver, "const v = document.getElementById('tf-video'); return v.currentTime > 0.2 && v.currentTime", 8)
        error = driver.execute_script("const v = document.getElementById('tf-video'); return [v.error && v.error.code, v.currentSrc]")
        check(f"lightbox: {item['path']} plays", played is True and bool(time) and not error[0], f"{played}, currentTime {time}, {error}")
        # Scrubbing: a seek shows the sprite's tile for that time over the frame.
        sheet = video.get("scrub")
        if sheet:
            at = min(video["duration"] * 0.6, video["duration"] - 0.1)
            tile = min(sheet["count"] - 1, int(at // sheet["interval"]))
            driver.execute_script(f"const v = document.getElementById('tf-video'); v.pause(); v.currentTime = {at};")
            shown = wait(driver, """const s = document.getElementById('tf-scrub');
                return !s.hidden && [s.hidden, s.dataset.tile, s.style.backgroundImage, s.style.backgroundPosition,
                                     s.style.width, s.style.height];""", 3) or [True]
            position = f"{-(tile % sheet['columns']) * sheet['tileWidth']}px {-(tile // sheet['columns']) * sheet['tileHeight']}px"
            check(f"lightbox: {item['path']} scrubbed to {at:.1f} s shows tile {tile} of its sprite",
                  shown[0] is False and len(shown) == 6 and shown[1] == str(tile) and sheet["sprite"] in shown[2]
                  and shown[3] == position
                  and shown[4] == f"{sheet['tileWidth']}px" and shown[5] == f"{sheet['tileHeight']}px", f"{shown} vs {position}")
            driver.save_screenshot(os.path.join(artifacts, f"media-video-{index}-scrub.png"))
            gone = wait(driver, "return document.getElementById('tf-scrub').hidden", 3)
            check(f"lightbox: {item['path']}'s scrub preview goes when the seek ends", gone)
            # Hovering the timeline (the band along the video's bottom where its controls are)
            # previews the time under the pointer, the tile following it; above the band, none.
            player = driver.find_element("id", "tf-video")
            box = driver.execute_script("const r = arguments[0].getBoundingClientRect(); "
                                        "return [r.x, r.y, r.width, r.height, arguments[0].duration]", player)
            duration = box[4] if box[4] and box[4] > 0 else video["duration"]
            margin = min(16, box[2] / 10)
            tiles = []
            for fraction in (0.2, 0.8):
                x = box[0] + margin + fraction * (box[2] - 2 * margin)
                y = min(box[1] + box[3], 844) - 20
                webdriver.ActionChains(driver).move_to_element_with_offset(
                    player, int(x - (box[0] + box[2] / 2)), int(y - (box[1] + box[3] / 2))).perform()
                expected = min(sheet["count"] - 1, int(duration * fraction // sheet["interval"]))
                shown = wait(driver, f"""const s = document.getElementById('tf-scrub');
                    return !s.hidden && Math.abs(s.dataset.tile - {expected}) <= 1 && [s.dataset.tile, s.getBoundingClientRect().x];""", 3)
                tiles.append(shown)
            check(f"lightbox: {item['path']}'s timeline under the pointer previews its time, the tile following the pointer",
                  all(tiles) and int(tiles[0][0]) < int(tiles[1][0]) and tiles[0][1] < tiles[1][1], f"{tiles}")
            webdriver.ActionChains(driver).move_to_element_with_offset(player, 0, -int(box[3] / 4)).perform()
            gone = wait(driver, "return document.getElementById('tf-scrub').hidden", 3)
            check(f"lightbox: {item['path']}'s hover preview goes above the timeline", gone)
        driver.save_screenshot(os.path.join(artifacts, f"media-video-{index}.png"))
    driver.execute_script("thumbframeViewer.close()")

    for index, item in enumerate(items):
        if "motion" not in item:
            continue
        cell = driver.find_element("css selector", f'.tf-cell[data-index="{index}"]')
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cell)
        webdriver.ActionChains(driver).move_to_element(cell).perform()
        time = wait(driver, f"""const v = document.querySelector('.tf-cell[data-index="{index}"] .tf-motion');
                                return v && v.currentTime > 0.1 && v.currentTime""", 8)
        check(f"grid: {item['path']}'s motion plays under the pointer", bool(time), f"currentTime {time}")
        driver.save_screenshot(os.path.join(artifacts, f"media-motion-{index}.png"))
        webdriver.ActionChains(driver).move_to_element(driver.find_element("id", "tf-title")).perform()
        gone = wait(driver, f"""return !document.querySelector('.tf-cell[data-index="{index}"] .tf-motion')""", 3)
        check(f"grid: {item['path']}'s motion stops when the pointer leaves", gone)
        driver.execute_script(f"return thumbframeViewer.open({index})")
        shown = wait(driver, "return !document.getElementById('tf-live').hidden", 3)
        driver.execute_script("document.getElementById('tf-live').click()")
        time = wait(driver, "const v = document.querySelector('#tf-content > .tf-motion'); return v && v.currentTime > 0.1 && v.currentTime", 8)
        check(f"lightbox: {item['path']}'s LIVE button plays its motion over the photo", shown and bool(time), f"{shown}, {time}")
        driver.execute_script("thumbframeViewer.close()")
finally:
    driver.quit()
server.shutdown()
check.finish()
