// The viewer's fallback layout (for a window no manifest viewport matches) against the Swift
// LayoutEngine's numbers. The cases come from THUMBFRAME_LAYOUT_CASES, a JSON file the Swift test
// "the viewer's fallback layout is the LayoutEngine's …" writes (random images and window sizes
// for every preset); without it, the worked examples of the specification.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import fs from "node:fs";
import { layoutFor, justify, shownCells, cellSizes, srcsetChoice, tileLevel, tilesInView, zoomStretch,
  TILE_STRETCH }
  from "../src/layout.js";

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

const rowCases = process.env.THUMBFRAME_JUSTIFY_CASES;
if (rowCases) {
  // The build lays out a phone's first screen with JustifiedRows to choose the picture index.html
  // carries: the same rows, to the last bit of every height and width.
  test("justified rows are JustifiedRows' for every case given", () => {
    const cases = JSON.parse(fs.readFileSync(rowCases, "utf8"));
    assert.ok(cases.length > 0, "no cases");
    for (const c of cases) {
      const rows = justify(c.aspects.map((aspect) => ({ width: aspect, height: 1 })), c.width, c.target, 4);
      const where = `${c.aspects.length} cells across ${c.width}`;
      assert.deepStrictEqual(rows.map((row) => row.cells.length), c.rows.map((row) => row.count), where);
      const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
      rows.forEach((row, k) => assert.ok(near(row.height, c.rows[k].height) && row.widths.every((w, i) => near(w, c.rows[k].widths[i])),
        `${where}: row ${k}`));
    }
  });
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

test("justified rows fill the width exactly, the last keeps the target height, in order", () => {
  const cells = [[4000, 3000], [3000, 4000], [1920, 1080], [1000, 1000], [800, 6000], [6000, 800], [3000, 2000]]
    .map(([width, height], item) => ({ width, height, item }));
  const rows = justify(cells, 390, 110, 4);
  assert.deepStrictEqual(rows.flatMap((row) => row.cells.map((cell) => cell.item)), [0, 1, 2, 3, 4, 5, 6]);
  for (const [k, row] of rows.entries()) {
    const filled = row.widths.reduce((a, b) => a + b, 0) + 4 * (row.cells.length - 1);
    row.cells.forEach((cell, j) => near(row.widths[j] / row.height, cell.width / cell.height, 1e-9, `row ${k} cell ${j} aspect`));
    if (k < rows.length - 1) {
      near(filled, 390, 1e-6, `row ${k} width`);
      assert.ok(row.height <= 110 + 1e-9, `row ${k} is no taller than the target: ${row.height}`);
    } else assert.ok(row.height <= 110 && filled <= 390 + 1e-6, `the last row: ${row.height} high, ${filled} wide`);
  }
  // A row closes as soon as its cells at the target height reach the width: not one cell later.
  for (const row of rows.slice(0, -1)) {
    const short = row.cells.slice(0, -1).reduce((sum, cell) => sum + cell.width / cell.height, 0);
    assert.ok(short * 110 + 4 * (row.cells.length - 2) < 390, "a row holds no cell past the one that filled it");
  }
  assert.deepStrictEqual(justify([], 390, 110, 4), []);
});

test("a stack is one cell (its cover's); sizes follow the stretch", () => {
  const cells = [{ item: 0 }, { item: 1, stack: { cover: 1 } }, { item: 2, stack: { cover: 1 } }, { item: 3 }];
  assert.deepStrictEqual(shownCells(cells).map((cell) => cell.item), [0, 1, 3]);
  assert.strictEqual(cellSizes(160), "128px");
  assert.strictEqual(cellSizes(161), "129px");
  // The srcset's choice: the narrowest covering the cell's device pixels over the stretch.
  const renditions = [{ width: 512 }, { width: 1280 }];
  assert.strictEqual(srcsetChoice(renditions, 196, 3), renditions[0]);
  assert.strictEqual(srcsetChoice(renditions, 214, 3), renditions[1]);
  assert.strictEqual(srcsetChoice(renditions, 800, 3), renditions[1]);
  assert.strictEqual(srcsetChoice([], 100, 1), null);
});

test("a deep-zoom level is the smallest within the stretch of the device's pixels", () => {
  // 8 000 px wide, 14 levels (0 … 13): level 13 is 8 000, 12 is 4 000, 11 is 2 000, 10 is 1 000.
  assert.strictEqual(tileLevel(8000, 14, 8000), 13);
  assert.strictEqual(tileLevel(8000, 14, 5000), 12, "4 000 × 1.25 = 5 000 covers it");
  assert.strictEqual(tileLevel(8000, 14, 5100), 13, "4 000 × 1.25 < 5 100: the full size");
  assert.strictEqual(tileLevel(8000, 14, 4900), 12);
  assert.strictEqual(tileLevel(8000, 14, 2500), 11);
  assert.strictEqual(tileLevel(8000, 14, 2600), 12, "2 000 × 1.25 = 2 500 < 2 600: the next level up");
  assert.strictEqual(tileLevel(8000, 14, 1), 0);
  for (let device = 1; device < 12000; device += 37) {
    const level = tileLevel(8000, 14, device), width = Math.ceil(8000 / 2 ** (13 - level));
    assert.ok(level === 13 || width * 1.25 >= device - 0.5, `level ${level} stretches past 1.25 for ${device}`);
    assert.ok(level === 0 || Math.ceil(8000 / 2 ** (14 - level)) * 1.25 < device - 0.5, `level ${level} is not the smallest for ${device}`);
  }
});

test("the tiles in view cover it, overlap their neighbours, and are bounded", () => {
  const tiles = tilesInView(1000, 700, 254, 1, { x0: 300, y0: 10, x1: 700, y1: 400 });
  assert.deepStrictEqual(tiles.map((t) => t.name), ["1_0", "1_1", "2_0", "2_1"]);
  const first = tiles[0];
  assert.deepStrictEqual([first.x, first.y, first.width, first.height], [253, 0, 256, 255]);
  const edge = tilesInView(1000, 700, 254, 1, { x0: 990, y0: 690, x1: 5000, y1: 5000 });
  assert.deepStrictEqual(edge.map((t) => [t.name, t.x + t.width, t.y + t.height]), [["3_2", 1000, 700]]);
  const hostile = tilesInView(1e9, 1e9, 16, 0, { x0: 0, y0: 0, x1: 1e9, y1: 1e9 });
  assert.strictEqual(hostile.length, 65 * 65);
});

// What deep zoom fetches against what it shows, as the viewer picks levels and tiles: photos of
// 20, 45, 60 and 100 MP (a DeepZoom pyramid of 254-px tiles, overlap 1) fitted on a phone
// (390x844 at 3x) and a laptop (1440x900 at 2x), at every zoom from where tiles take over from
// the 4 096-px rendition to twice the full size, the view at four places.
function deepZoomCost(W, H, [sw, sh, dpr], stretch) {
  const levels = Math.ceil(Math.log2(Math.max(W, H))) + 1, top = levels - 1;
  const fit = Math.min(sw / W, sh / H), fw = W * fit, fh = H * fit;
  let worst = 0;
  for (let zoom = Math.max(1, 4096 / (fw * dpr) * stretch); zoom <= (2 * W) / (fw * dpr); zoom *= 1.01) {
    const shownW = fw * zoom, shownH = fh * zoom;
    const level = tileLevel(W, levels, shownW * dpr, stretch);
    const lw = Math.ceil(W / 2 ** (top - level)), lh = Math.ceil(H / 2 ** (top - level)), scale = shownW / lw;
    for (const [fx, fy] of [[0, 0], [0.5, 0.5], [0.37, 0.61], [1, 1]]) {
      const left = Math.max(0, (shownW - sw) * fx), y = Math.max(0, (shownH - sh) * fy);
      const view = { x0: left / scale, y0: y / scale, x1: (left + sw) / scale, y1: (y + sh) / scale };
      const fetched = tilesInView(lw, lh, 254, 1, view).reduce((sum, t) => sum + t.width * t.height, 0);
      worst = Math.max(worst, fetched / (Math.min(sw, shownW) * Math.min(sh, shownH) * dpr * dpr));
      // Sharp: a level pixel covers at most `stretch` device pixels (the full size past it).
      assert.ok(level === top || (lw * stretch) >= shownW * dpr - 0.5, `${W}x${H} level ${level} at zoom ${zoom}`);
    }
  }
  return worst;
}

test("deep zoom fetches at most 1.5 times the pixels it shows, at any zoom, on a phone and a laptop", () => {
  const sizes = { "20 MP": [5472, 3648], "45 MP": [8256, 5504], "60 MP": [9504, 6336], "100 MP": [11648, 8736] };
  const screens = { phone: [390, 844, 3], laptop: [1440, 900, 2] };
  let before = 0;
  for (const [label, [W, H]] of Object.entries(sizes))
    for (const [name, screen] of Object.entries(screens)) {
      const worst = deepZoomCost(W, H, screen, zoomStretch(screen[2]));
      assert.ok(worst <= 1.5, `${label} on the ${name}: ${worst.toFixed(2)} times`);
      before = Math.max(before, deepZoomCost(W, H, screen, TILE_STRETCH));
    }
  assert.ok(before > 2, `a fixed 1.25 fetched up to ${before.toFixed(2)} times (the rule this replaced)`);
  assert.deepStrictEqual([1, 1.5, 2, 3].map(zoomStretch), [1.25, 1.5, 2, 2]);
});
