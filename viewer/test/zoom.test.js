// The zoom module: the rendition ladder a photo climbs as it zooms, and the zoom's range.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { rungsOf, rungFor, clampZoom, zoomRange } from "../src/zoom.js";

const settings = { viewports: [{ name: "phone", width: 390, height: 844, scale: 3 }], srcset: ["small", "preview"],
  ladder: { renditions: [{ name: "zoom2560" }, { name: "zoom4096" }] } };
const photo = { kind: "photo", thumbnails: { small: { width: 512 }, preview: { width: 1280 }, zoom2560: { width: 2560 },
  zoom4096: { width: 4096, headroom: 3 }, tiles: { width: 8000 } } };
const fitted = (width) => ({ frame: { width }, zoom: { min: 1, max: 4 } });

test("without a matching viewport the rungs are the thumbnails' widths over the frame's device pixels", () => {
  const rungs = rungsOf(photo, fitted(1000), settings, 2, false, false);
  assert.deepStrictEqual(rungs.map((r) => [r.name, r.native]),
    [["small", 0.256], ["preview", 0.64], ["zoom2560", 1.28], ["zoom4096", 2.048], ["tiles", 4]]);
  assert.strictEqual(rungFor(rungs, 1).name, "zoom2560");
  assert.strictEqual(rungFor(rungs, 1.28).name, "zoom2560");
  assert.strictEqual(rungFor(rungs, 1.3).name, "zoom4096");
  assert.strictEqual(rungFor(rungs, 9).name, "tiles", "past the largest: the largest");
});

test("a matching viewport's ladder is scaled to this screen, and an HDR screen keeps its gain maps", () => {
  const L = { ...fitted(390), viewport: "phone", zoom: { min: 0.5, max: 4 }, ladder: [{ name: "zoom2560", native: 1 }] };
  assert.deepStrictEqual(rungsOf(photo, L, settings, 2, false, false), [{ name: "zoom2560", native: 3 }]);
  const hdr = rungsOf(photo, fitted(1000), settings, 2, true, false);
  assert.deepStrictEqual(hdr.map((r) => r.name), ["zoom4096"]);
});

test("no rungs for an original, a video, or a library without a ladder or tiles", () => {
  assert.strictEqual(rungsOf(photo, fitted(1000), settings, 2, false, true), null);
  assert.strictEqual(rungsOf({ ...photo, kind: "video" }, fitted(1000), settings, 2, false, false), null);
  const plain = { ...photo, thumbnails: { small: { width: 512 }, preview: { width: 1280 } } };
  assert.strictEqual(rungsOf(plain, fitted(1000), { ...settings, ladder: undefined }, 2, false, false), null);
});

test("zoom stays between the fit and the layout's maximum", () => {
  const photoswipe = { zoom: { min: 0.25, max: 1 } };
  assert.strictEqual(clampZoom(10, photoswipe), 4);
  assert.strictEqual(clampZoom(0.5, photoswipe), 1);
  assert.strictEqual(clampZoom(2, { zoom: { min: 1, max: 0.5 } }), 1, "a maximum below the fit: the fit");
});

test("a rendition may stretch as a deep-zoom level does: a laptop opens a big photo from 2 560 px, not 4 096", () => {
  // A 45 MP photo (8 256 x 5 504) fitted in 1 440 x 900 at 2x: 1 350 CSS px wide, 2 700 device px.
  const rungs = rungsOf({ ...photo, thumbnails: { ...photo.thumbnails, zoom4096: { width: 4096 } } }, fitted(1350), settings, 2,
    false, false);
  assert.strictEqual(rungFor(rungs, 1).name, "zoom4096", "at least a device pixel a picture pixel");
  assert.strictEqual(rungFor(rungs, 1, 2).name, "zoom2560", "within the stretch: 2 560 / 2 700 × 2 ≥ 1");
  assert.strictEqual(rungFor(rungs, 1.9, 2).name, "zoom4096");
});

test("a photo shown from one file zooms no further than that file holds", () => {
  // The default build on a laptop: the 1 280-px preview fitted 1 350 CSS px wide at 2x.
  const jx3 = { frame: { width: 1350 }, zoom: { min: 1, max: 2, doubleTap: 2 } };
  assert.deepStrictEqual(zoomRange(jx3, null, 1280 / 2700, 2), { min: 1, max: 1, doubleTap: 1 }, "already past it: no zoom");
  // On a phone at 3x, 1 170 device px: the preview holds 1.09 of them, stretched 2: 2.19.
  assert.deepStrictEqual(zoomRange({ ...jx3, frame: { width: 390 } }, null, 1280 / 1170, 2), { min: 1, max: 2, doubleTap: 2 });
  assert.ok(Math.abs(zoomRange(jx3, null, 1280 / 2000, 2).max - 1.28) < 1e-9);
  // The ladder's largest rendition bounds it; deep-zoom tiles reach the full size.
  const rungs = [{ name: "preview", native: 0.5 }, { name: "zoom2560", native: 0.8 }];
  assert.ok(Math.abs(zoomRange(jx3, rungs, 0, 2).max - 1.6) < 1e-9);
  assert.strictEqual(zoomRange(jx3, [...rungs, { name: "tiles", native: 4 }], 0, 2).max, 2);
  // PhotoSwipe counts in picture pixels a CSS pixel: its range is moved by its fit.
  const photoswipe = { frame: { width: 1000 }, zoom: { min: 0.25, max: 1, doubleTap: 0.75 } };
  assert.deepStrictEqual(zoomRange(photoswipe, null, 0.5, 2), { min: 0.25, max: 0.25, doubleTap: 0.25 });
});
