// The grid module: what part of a cell the view shows (the rest needs a page: the browser tests).
//   node --test viewer/test/
import test from "node:test";
import assert from "node:assert";
import { seenHeight } from "../src/grid.js";

test("a cell's height in view: all, part, none", () => {
  assert.strictEqual(seenHeight({ y: 100, height: 110 }, [0, 844]), 110);
  assert.strictEqual(seenHeight({ y: 800, height: 110 }, [0, 844]), 44);
  assert.strictEqual(seenHeight({ y: -50, height: 110 }, [0, 844]), 60);
  assert.strictEqual(seenHeight({ y: 900, height: 110 }, [0, 844]), 0);
});
