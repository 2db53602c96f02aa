// The video module: which file plays where, badges, clocks, and the scrub preview's tile and
// hover time.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { configure } from "../src/data.js";
import { videoType, videoSources, clock, badge, scrubTile, hoverTime } from "../src/video.js";

configure({ settings: {}, sections: [] }, "https://example.org/", async () => ({ items: [] }));
const rendition = { path: "videos/r.mp4", codecs: "avc1.640028" };

test("the original plays where the browser says it can, the rendition everywhere else", () => {
  const hevc = { container: "mov", codec: "hevc", rendition };
  const safari = (type) => type.includes("hvc1") || type.includes("avc1");
  const chromium = (type) => type.includes("avc1");
  assert.strictEqual(videoType(hevc), 'video/mp4; codecs="hvc1.1.6.L93.B0"');
  assert.deepStrictEqual(videoSources(hevc, "https://o/v.mov", safari).map((s) => s.src),
    ["https://o/v.mov", "https://example.org/videos/r.mp4"]);
  assert.deepStrictEqual(videoSources(hevc, "https://o/v.mov", chromium).map((s) => s.src), ["https://example.org/videos/r.mp4"]);
  assert.deepStrictEqual(videoSources({ ...hevc, delivery: "remux" }, "https://o/v.mov", safari).map((s) => s.src),
    ["https://example.org/videos/r.mp4", "https://o/v.mov"], "a remux: the rendition first");
  assert.deepStrictEqual(videoSources({ container: "avi", codec: "mpeg4" }, "https://o/v.avi", () => false), []);
  assert.deepStrictEqual(videoSources({ container: "mp4", codec: "h264", playable: true }, "https://o/v.mp4", () => false)
    .map((s) => s.type), ['video/mp4; codecs="avc1.42E01E"'], "the manifest's word that it plays");
});

test("clocks and badges", () => {
  assert.deepStrictEqual([0, 7.4, 59.6, 750, 3723].map(clock), ["0:00", "0:07", "1:00", "12:30", "1:02:03"]);
  assert.strictEqual(badge({ kind: "video", duration: 75 }), "1:15");
  assert.strictEqual(badge({ kind: "animated", format: "gif" }), "GIF");
  assert.strictEqual(badge({ kind: "photo", motion: {} }), "LIVE");
  assert.strictEqual(badge({ kind: "photo", raw: true }), "RAW");
  assert.strictEqual(badge({ kind: "photo" }), null);
});

test("a scrub tile for every time, clamped to the sheet", () => {
  const sheet = { count: 10, interval: 2, columns: 4, tileWidth: 160, tileHeight: 90 };
  assert.deepStrictEqual(scrubTile(sheet, 0), { tile: 0, x: 0, y: 0 });
  assert.deepStrictEqual(scrubTile(sheet, 11.9), { tile: 5, x: 160, y: 90 });
  assert.deepStrictEqual(scrubTile(sheet, 1e6), { tile: 9, x: 160, y: 180 });
  assert.deepStrictEqual(scrubTile(sheet, -3), { tile: 0, x: 0, y: 0 });
});

test("the time under the pointer spreads the duration across the timeline", () => {
  // A 1 000 px video at 100: the timeline from 116 to 1 084.
  assert.strictEqual(hoverTime(116, 100, 1000, 60), 0);
  assert.strictEqual(hoverTime(600, 100, 1000, 60), 30);
  assert.strictEqual(hoverTime(1084, 100, 1000, 60), 60);
  assert.strictEqual(hoverTime(40, 100, 1000, 60), 0, "left of it");
  assert.strictEqual(hoverTime(5000, 100, 1000, 60), 60, "right of it");
  assert.ok(Math.abs(hoverTime(50, 0, 100, 10) - 5) < 1e-9, "a narrow video's margin is a tenth");
});
