// The data module: pages read once and placed at their flat indices, sections found by index,
// the file the lightbox shows, and the words a screen reader hears.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { configure, itemAt, loadCells, sectionOf, findCell, loaded, url, originalURL, describe, placeLabel, libraryName,
  cellAt } from "../src/data.js";

// A library of two sections (3 + 4 items, the second in pages of 2), and a reader that counts reads.
function library(settings = {}) {
  const page = (name, start, count) => ({ path: `pages/${name}.json`, grid: `pages/${name}.grid.json`, start, count });
  const doc = { itemCount: 7, settings: { display: "preview", ...settings },
    sections: [{ name: ".", title: "Trip", start: 0, count: 3, pages: [page("a", 0, 3)] },
      { name: "beach", title: "Beach", start: 3, count: 4, pages: [page("b1", 0, 2), page("b2", 2, 2)] }] };
  const reads = [];
  const entries = (start, count, grid) => Array.from({ length: count }, (_, k) => ({ item: start + k, grid,
    path: `p${start + k}.jpg`, kind: "photo", image: { width: 4000, height: 3000, format: "jpeg" },
    thumbnails: { preview: { path: `thumbs/${start + k}.jpg`, width: 1280, height: 960 } } }));
  const files = {};
  for (const section of doc.sections)
    for (const p of section.pages) {
      files[p.path] = { items: entries(p.start, p.count, false) };
      files[p.grid] = { items: entries(p.start, p.count, true) };
    }
  configure(doc, "https://example.org/album/", async (path) => { reads.push(path); return structuredClone(files[path]); });
  return { doc, reads };
}

test("an item's page is read once, its entries at their flat indices", async () => {
  const { reads } = library();
  const [a, b] = await Promise.all([itemAt(5), itemAt(6)]);
  assert.deepStrictEqual([a.flat, a.path, b.flat, b.path], [5, "p2.jpg", 6, "p3.jpg"]);
  assert.deepStrictEqual(reads, ["pages/b2.json"]);
  await itemAt(5);
  assert.deepStrictEqual(reads, ["pages/b2.json"], "read again");
  assert.strictEqual(cellAt(5), undefined, "a full page is no grid page");
});

test("sections by flat index, and cells found in the order asked", async () => {
  const { doc, reads } = library();
  assert.deepStrictEqual([0, 2, 3, 6].map((index) => sectionOf(index).name), [".", ".", "beach", "beach"]);
  const cells = await loadCells(doc.sections[1], doc.sections[1].pages[0]);
  assert.deepStrictEqual(cells.map((cell) => [cell.flat, cell.grid]), [[3, true], [4, true]]);
  const found = await findCell((cell) => cell.path === "p1.jpg", (section) => section.name === "beach");
  assert.strictEqual(found.flat, 4, "the beach section first: its p1.jpg");
  assert.deepStrictEqual(reads, ["pages/b1.grid.json"], "found in the first page read");
  assert.strictEqual(await findCell(() => false), null);
});

test("the lightbox shows an original browsers decode, else the display thumbnail", () => {
  library({ originalURL: "https://cdn.example/originals/", browserFormats: ["jpeg"] });
  const photo = { path: "a b/c#1.jpg", kind: "photo", image: { width: 4000, height: 3000, format: "jpeg" },
    thumbnails: { preview: { path: "thumbs/x.jpg", width: 1280, height: 960 } } };
  assert.strictEqual(originalURL(photo.path), "https://cdn.example/originals/a%20b/c%231.jpg");
  assert.deepStrictEqual(loaded(photo).layoutSize, [4000, 3000]);
  assert.strictEqual(loaded(photo).src, "https://cdn.example/originals/a%20b/c%231.jpg");
  const heic = { ...photo, image: { ...photo.image, format: "heic" } };
  assert.strictEqual(loaded(heic).src, "https://example.org/album/thumbs/x.jpg");
  library({ preset: "photoswipe" });
  assert.deepStrictEqual(loaded(photo).layoutSize, [1280, 960], "PhotoSwipe lays out the file it loads");
  assert.strictEqual(url("pages/a.json"), "https://example.org/album/pages/a.json");
});

test("words for screen readers and titles", () => {
  assert.strictEqual(describe({ kind: "video", path: "v.mp4", captured: "2024-05-01T10:00:00" }), "video v.mp4, 2024-05-01");
  assert.strictEqual(describe({ kind: "photo", path: "a.jpg", motion: {}, stack: { members: [1, 2, 3] } }),
    "live photo a.jpg, stack of 3");
  assert.strictEqual(placeLabel({ name: "Porto", country: "Portugal" }), "Porto, Portugal");
  assert.strictEqual(placeLabel({ cell: "x", latitude: 41.15, longitude: -8.61 }), "41.1500, -8.6100");
  assert.strictEqual(libraryName({ sections: [{ name: "a", title: "A" }, { name: ".", title: "Root" }] }), "Root");
  assert.strictEqual(libraryName({ sections: [{ name: "a", title: "A" }, { name: "b", title: "B" }] }), "Photos");
});
