// When pictures are fetched: a cell's srcset, the screen's largest first (its layout is
// layout.js's and timeline.js's, tested there).
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { configure } from "../src/data.js";
import { srcsetOf, byArea, pictureQueue } from "../src/pictures.js";

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

test("the screen's largest picture first, alone; then the rest of the screen's; the margin's last", async () => {
  const queue = pictureQueue(40, 80);
  const started = [], ends = {};
  const task = (name) => (done) => { started.push(name); ends[name] = done; };
  queue.push(task("largest"), true);
  queue.push(task("second"), true);
  queue.push(task("margin"), false);
  queue.push(task("third"), true);
  assert.deepStrictEqual(started, ["largest"], "alone");
  ends.largest();
  ends.largest();  // twice: counted once
  assert.deepStrictEqual(started, ["largest", "second", "third"], "then the rest of the screen's, at once");
  ends.second();
  assert.deepStrictEqual(started.length, 3, "the margin's wait for the whole screen");
  ends.third();
  assert.deepStrictEqual(started, ["largest", "second", "third", "margin"]);
  queue.push(task("scrolled to"), true);
  assert.strictEqual(started.at(-1), "scrolled to", "later pictures on screen start at once");
  // A first picture that never comes holds the others back `head` ms; a screen that stalls
  // holds the margin's `stall` ms.
  const slow = pictureQueue(30, 60), order = [];
  slow.push(() => order.push("stalled"), true);
  slow.push(() => order.push("next"), true);
  slow.push(() => order.push("margin"), false);
  assert.deepStrictEqual(order, ["stalled"]);
  await new Promise((resolve) => setTimeout(resolve, 45));
  assert.deepStrictEqual(order, ["stalled", "next"]);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepStrictEqual(order, ["stalled", "next", "margin"]);
  assert.strictEqual(slow.waiting(), 0);
});

test("the margin's pictures do not wait for each other", () => {
  const queue = pictureQueue(40, 80), started = [];
  for (const name of ["m1", "m2", "m3"]) queue.push(() => started.push(name), false);
  assert.deepStrictEqual(started, ["m1", "m2", "m3"]);
  assert.strictEqual(queue.running(), 0);
});
