// The timeline: the manifest's aspects and rows decoded, a library laid out whole from them,
// and the rows of any band found without the pages. With THUMBFRAME_GEOMETRY_CASES (a file the
// Swift test "the viewer's modules pass their tests …" writes: pages of a build, every code's
// aspect), the build's rows and heights to the bit.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import fs from "node:fs";
import { aspectOf, decodeAspects, decodeRows, pageLayout, ruleOf, buildTimeline, blocksIn, rowsIn, cellTop, blockOf }
  from "../src/timeline.js";

const rule = ruleOf({});
const encode = (codes) => codes.map((c) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[c >> 6] +
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[c & 63]).join("");

test("codes are aspects from 1:8 to 8:1, rows are lengths", () => {
  assert.strictEqual(aspectOf(0), 0.125);
  assert.strictEqual(aspectOf(3 * 682), 1);
  assert.ok(aspectOf(6 * 682 - 1) < 8 && aspectOf(6 * 682 - 1) > 7.98);
  assert.deepStrictEqual(decodeAspects(encode([3 * 682, 4 * 682])), [1, 2]);
  assert.deepStrictEqual(decodeRows("CDE_BI"), [2, 3, 4, 72]);
});

test("a library laid out whole: blocks in order, bands found by search, marks at their rows", () => {
  const page = (n, code) => ({ aspects: encode(Array(n).fill(code)) });
  const doc = { settings: {}, sections: [{ pages: [page(256, 3 * 682), page(10, 4 * 682)] }, { pages: [page(100, 2 * 682 + 341)] }] };
  const timeline = buildTimeline(doc, 390, (number) => (number ? 40 : 0));
  const [a, b, c] = timeline.blocks;
  assert.strictEqual(a.top, 0);
  assert.strictEqual(b.top, a.height);
  assert.strictEqual(c.top, a.height + b.height + 40, "the second section's title above it");
  assert.strictEqual(timeline.height, c.top + c.height);
  // Squares at 110 px in 382: four a row (3 x 110 + 8 < 382 <= 4 x 110 + 12), 64 rows.
  assert.strictEqual(a.height, pageLayout(a.aspects, 390, rule).height);
  assert.strictEqual(pageLayout(a.aspects, 390, rule).rows.length, 64);
  assert.deepStrictEqual(blocksIn(timeline, a.height + 1, a.height + 2).map((x) => x.page), [1]);
  assert.deepStrictEqual(blocksIn(timeline, -10, timeline.height + 10).length, 3);
  const band = rowsIn(timeline, 1000, 1844);
  assert.ok(band.length > 5 && band.every(({ block, row }) => block.top + row.top <= 1844 && block.top + row.top + row.height >= 1000));
  assert.strictEqual(cellTop(timeline, a, 5), a.top + pageLayout(a.aspects, 390, rule).rows[1].top, "cell 5 is in the second row");
  assert.strictEqual(blockOf(timeline, 1, 0), c);
});

const file = process.env.THUMBFRAME_GEOMETRY_CASES;
if (file) {
  test("every code's aspect and every page's rows and heights are the build's", () => {
    const cases = JSON.parse(fs.readFileSync(file, "utf8"));
    cases.aspects.forEach((aspect, code) => assert.strictEqual(aspectOf(code), aspect, `code ${code}`));
    assert.ok(cases.pages.length > 0);
    for (const page of cases.pages)
      for (const viewport of cases.viewports) {
        const laid = pageLayout(decodeAspects(page.aspects), viewport.width, ruleOf(cases.settings));
        assert.deepStrictEqual(laid.rows.map((row) => row.cells.length), decodeRows(page.rows[viewport.name]), viewport.name);
        assert.strictEqual(Math.round(laid.height * 100) / 100, page.heights[viewport.name], viewport.name);
      }
  });
}
