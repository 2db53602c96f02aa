// The scrubber: marks placed at their rows, the mark of a scroll position, what the track says.
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { placeMarks, markAt, trackLabel } from "../src/scrubber.js";
import { buildTimeline } from "../src/timeline.js";

test("marks at their rows; the mark of a place; years once on the track", () => {
  const doc = { settings: {}, sections: [{ pages: [{ aspects: "f-".repeat(10) }] }] };
  const timeline = buildTimeline(doc, 390, () => 0);
  const marks = placeMarks([{ label: "2023-12", section: 0, page: 0, cell: 0 }, { label: "2024-01", section: 0, page: 0, cell: 7 },
    { label: "2024-02", section: 0, page: 0, cell: 9 }], timeline, 100);
  assert.strictEqual(marks[0].y, 100);
  assert.ok(marks[1].y > marks[0].y && marks[2].y > marks[1].y);
  assert.strictEqual(markAt(marks, 99).label, "2023-12");
  assert.strictEqual(markAt(marks, marks[1].y).label, "2024-01");
  assert.strictEqual(markAt(marks, 1e9).label, "2024-02");
  assert.deepStrictEqual(marks.map((mark, k) => trackLabel(mark, marks[k - 1])), ["2023", "2024", ""]);
  assert.strictEqual(trackLabel({ label: "Holidays" }), "Holidays");
});
