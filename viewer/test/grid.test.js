// The grid module: a cell's row height and srcset (its layout is layout.js's, tested there).
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { configure } from "../src/data.js";
import { rowTarget, srcsetOf, byArea } from "../src/grid.js";

test("a phone's rows are lower than a desktop's", () => {
  assert.strictEqual(rowTarget(390), 110);
  assert.strictEqual(rowTarget(599), 110);
  assert.strictEqual(rowTarget(600), 200);
});

test("a cell's srcset lists the family it has, with widths, below the page's address", () => {
  configure({ settings: {}, sections: [] }, "https://example.org/album/", async () => ({ items: [] }));
  const item = { thumbnails: { small: { path: "thumbs/a/s.jpg", width: 512 }, preview: { path: "thumbs/b/p.jpg", width: 1280 } } };
  assert.strictEqual(srcsetOf(item, ["small", "preview"]),
    "https://example.org/album/thumbs/a/s.jpg 512w, https://example.org/album/thumbs/b/p.jpg 1280w");
});

test("the cells coming into view are taken largest first, equal ones in order", () => {
  const entry = (name, width, height) => ({ name, boundingClientRect: { width, height } });
  const sorted = byArea([entry("a", 100, 110), entry("b", 300, 110), entry("c", 100, 110), entry("d", 150, 110)]);
  assert.deepStrictEqual(sorted.map((e) => e.name), ["b", "d", "a", "c"]);
});
