// The whole grid at a window's width from the manifest alone: every page's `aspects` (two
// characters a shown cell, GridGeometry in Swift) laid out in justified rows, so the page knows
// where every section, page and row is — and its full height — before it reads a grid page.
// The numbers are the build's (`rows`, `heights`) to the bit: the same arithmetic in the same order.
import { justify } from "./layout.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const VALUE = Object.fromEntries([...ALPHABET].map((c, k) => [c, k]));
const STEPS = 682, OCTAVES = [0.125, 0.25, 0.5, 1, 2, 4];

// The cell aspect (width over height) of a code.
export const aspectOf = (code) => (STEPS + code % STEPS) / STEPS * OCTAVES[Math.min(Math.floor(code / STEPS), 5)];

// A page's `aspects` as numbers.
export function decodeAspects(text) {
  const aspects = new Array(text.length >> 1);
  for (let k = 0; k < aspects.length; k++) aspects[k] = aspectOf(VALUE[text[2 * k]] * 64 + VALUE[text[2 * k + 1]]);
  return aspects;
}

// `rows` (row lengths: one character for 1 to 62 cells, `_` and two for more) as numbers.
export function decodeRows(text) {
  const lengths = [];
  for (let k = 0; k < text.length; k++) {
    const value = VALUE[text[k]];
    if (value < 63) lengths.push(value);
    else {
      lengths.push(VALUE[text[k + 1]] * 64 + VALUE[text[k + 2]]);
      k += 2;
    }
  }
  return lengths;
}

// The grid's rule (settings.grid; a manifest before it has the same numbers).
export const ruleOf = (settings) => Object.assign({ gap: 4, padding: 4, rowHeight: 110, wideRowHeight: 200, wideFrom: 600 },
  settings && settings.grid);
export const targetOf = (rule, windowWidth) => (windowWidth < rule.wideFrom ? rule.rowHeight : rule.wideRowHeight);

// A page's rows in a window `windowWidth` wide (each: cells, widths, height, top from the page's
// top), and its block's height: each row with the gap under it.
export function pageLayout(aspects, windowWidth, rule) {
  const rows = justify(aspects.map((aspect) => ({ width: aspect, height: 1 })), windowWidth - 2 * rule.padding,
    targetOf(rule, windowWidth), rule.gap);
  let height = 0, first = 0;
  for (const row of rows) {
    Object.assign(row, { top: height, first });
    height = height + row.height + rule.gap;
    first += row.cells.length;
  }
  return { rows, height };
}

// The whole grid: a block per page (section, page, top, height, its aspects), each section's top,
// the total height. `titleHeight(section)`: the height of a section's title above its pages.
export function buildTimeline(doc, windowWidth, titleHeight) {
  const rule = ruleOf(doc.settings), blocks = [], sectionTops = [];
  let top = 0;
  doc.sections.forEach((section, number) => {
    sectionTops.push(top);
    top += titleHeight(number);
    section.pages.forEach((page, index) => {
      const aspects = decodeAspects(page.aspects || "");
      const { height } = pageLayout(aspects, windowWidth, rule);
      blocks.push({ section: number, page: index, top, height, aspects });
      top += height;
    });
  });
  return { windowWidth, rule, blocks, sectionTops, height: top };
}

// The blocks meeting [y0, y1], in order (a binary search for the first).
export function blocksIn(timeline, y0, y1) {
  const { blocks } = timeline;
  let low = 0, high = blocks.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (blocks[middle].top + blocks[middle].height < y0) low = middle + 1;
    else high = middle;
  }
  const found = [];
  for (let k = low; k < blocks.length && blocks[k].top <= y1; k++) found.push(blocks[k]);
  return found;
}

// The rows meeting [y0, y1]: each its block, its number in the block and the row.
export function rowsIn(timeline, y0, y1) {
  const found = [];
  for (const block of blocksIn(timeline, y0, y1))
    rowsOf(timeline, block).forEach((row, number) => {
      if (block.top + row.top <= y1 && block.top + row.top + row.height >= y0) found.push({ block, number, row });
    });
  return found;
}

// A block's rows (laid out once per width and kept).
export function rowsOf(timeline, block) {
  if (!block.rows) block.rows = pageLayout(block.aspects, timeline.windowWidth, timeline.rule).rows;
  return block.rows;
}

// The top of the row holding shown cell `cell` of a block, from the grid's top.
export function cellTop(timeline, block, cell) {
  let first = 0;
  for (const row of rowsOf(timeline, block)) {
    if (cell < first + row.cells.length) return block.top + row.top;
    first += row.cells.length;
  }
  return block.top;
}

// The block of a section's page.
export const blockOf = (timeline, section, page) => timeline.blocks.find((b) => b.section === section && b.page === page);
