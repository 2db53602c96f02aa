// The lightbox module: paging wraps, deep links round-trip any path, the caption in words, and
// what a press was.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { wrap, linkOf, pathOfHash, caption, gesture } from "../src/lightbox.js";

test("paging wraps at both ends", () => {
  assert.deepStrictEqual([-1, 0, 6, 7, 15, -15].map((index) => wrap(index, 7)), [6, 0, 6, 0, 1, 6]);
});

test("a deep link names any path and reads back; a hash that is no path opens nothing", () => {
  for (const path of ["a.jpg", "trip 2024/día #3/100% ok?.jpg", "x/../y.jpg"])
    assert.strictEqual(pathOfHash(linkOf({ path })), path);
  assert.strictEqual(linkOf({ path: "a b/c#d.jpg" }), "#a%20b/c%23d.jpg");
  assert.strictEqual(pathOfHash("#%E0%A4%A"), null);
  assert.strictEqual(pathOfHash("#"), null);
});

test("the caption says section, position, file, kind, place and stack", () => {
  const section = { title: "Beach", start: 10, count: 40 };
  assert.strictEqual(caption({ path: "a.mp4", kind: "video", video: { duration: 75 } }, section, 12, false),
    "Beach · 3 / 40 · a.mp4 · 1:15 (video not published)");
  assert.strictEqual(caption({ path: "b.jpg", kind: "photo", rawFile: {}, image: { format: "jpeg" },
    place: { name: "Porto" }, stack: { reason: "burst" } }, section, 10, false),
  "Beach · 1 / 40 · b.jpg · RAW + JPEG · Porto · one burst of a stack");
});

test("a press is a pull to close, a swipe to page, a tap, or nothing", () => {
  const drag = (dx, dy, vy = 1, top = 0) => ({ dx, dy, vy, top });
  assert.strictEqual(gesture(drag(3, 80), null), "close");
  assert.strictEqual(gesture(drag(3, 80, -2), null), null, "pulled back up");
  assert.strictEqual(gesture(drag(3, 80, 1, 120), null), null, "a long image scrolled down");
  assert.strictEqual(gesture(drag(-90, 10), null), "next");
  assert.strictEqual(gesture(drag(90, 10), null), "previous");
  assert.strictEqual(gesture(null, { x: 1, y: 1 }), "tap");
  assert.strictEqual(gesture(drag(20, 20), null), null);
});
