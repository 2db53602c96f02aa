// The viewer's fallback layout (for a window no manifest viewport matches) against the Swift
// LayoutEngine's numbers. The cases come from THUMBFRAME_LAYOUT_CASES, a JSON file the Swift test
// "the viewer's fallback layout is the LayoutEngine's …" writes (random images and window sizes
// for every preset); without it, the worked examples of the specification.
//   node --test viewer/test/
"use strict";
const test = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs");
const { layoutFor } = require("../thumbframe-viewer.js");

const examples = [
  // w, h, window W×H@s, jx3 frame, jx3 maxOffset.y, native (SPEC §5)
  [4000, 3000, 390, 844, 3, [0, 275.75, 390, 292.5], 0, 3.42],
  [4000, 3000, 844, 390, 3, [162, 0, 520, 390], 0, 2.56],
  [1080, 7000, 390, 844, 3, [0, 0, 390, 2527.78], 1683.78, 0.92],
  [1080, 7000, 844, 390, 3, [391.91, 0, 60.17, 390], 0, 5.98],
  [300, 200, 390, 844, 3, [0, 292, 390, 260], 0, 0.26],
  [300, 200, 844, 390, 3, [129.5, 0, 585, 390], 0, 0.17],
];

function near(actual, expected, tolerance, what) {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected}`);
}

function compare(actual, expected, what) {
  for (const key of ["x", "y", "width", "height"]) near(actual.frame[key], expected.frame[key], 1e-3, `${what} frame.${key}`);
  for (const key of ["width", "height"]) near(actual.contentSize[key], expected.contentSize[key], 1e-3, `${what} contentSize.${key}`);
  for (const key of ["x", "y"]) near(actual.maxOffset[key], expected.maxOffset[key], 1e-3, `${what} maxOffset.${key}`);
  assert.strictEqual(actual.long, expected.long, `${what} long`);
  for (const key of ["min", "max", "doubleTap", "native"]) {
    // The manifest rounds to 4 decimals; relative for the large zoom factors of tiny images.
    near(actual.zoom[key], expected.zoom[key], Math.max(1e-3, Math.abs(expected.zoom[key]) * 1e-6), `${what} zoom.${key}`);
  }
}

const file = process.env.THUMBFRAME_LAYOUT_CASES;
if (file) {
  test("the fallback layout is the LayoutEngine's for every case given", () => {
    const cases = JSON.parse(fs.readFileSync(file, "utf8"));
    assert.ok(cases.length > 0, "no cases");
    for (const c of cases) {
      compare(layoutFor(c.width, c.height, c.window.width, c.window.height, c.window.scale, c.preset), c.layout,
        `${c.preset} ${c.width}×${c.height} in ${c.window.width}×${c.window.height}@${c.window.scale}`);
    }
  });
} else {
  test("the fallback layout reproduces the specification's worked examples (jx3)", () => {
    for (const [w, h, W, H, s, frame, maxOffsetY, native] of examples) {
      const layout = layoutFor(w, h, W, H, s, "jx3");
      const [x, y, width, height] = frame;
      const what = `${w}×${h} in ${W}×${H}@${s}`;
      near(layout.frame.x, x, 0.01, `${what} x`);
      near(layout.frame.y, y, 0.01, `${what} y`);
      near(layout.frame.width, width, 0.01, `${what} width`);
      near(layout.frame.height, height, 0.01, `${what} height`);
      near(layout.maxOffset.y, maxOffsetY, 0.01, `${what} maxOffset.y`);
      near(layout.zoom.native, native, 0.01, `${what} native`);
    }
  });
}
