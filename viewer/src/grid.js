// The grid as a virtual timeline: the whole library's rows are known from the manifest
// (timeline.js), so the page has its full height from the start and never moves under the
// reader; only the rows within a screen of the view are in the page, each drawn from its grid
// page's cells (fetched when a row of it comes near; placeholders first, then the pictures,
// the screen's before the margin's). A library of a million photos holds a few screens of cells.
import { $, library, loadCells, firstCells, findCell, describe, placeLabel, paintPlaceholder, sectionOf } from "./data.js";
import { itemAt, inlinePicture } from "./data.js";
import { shownCells } from "./layout.js";
import { buildTimeline, blocksIn, rowsIn, cellTop } from "./timeline.js";
import { byArea, loadPicture, afterScreen } from "./pictures.js";
import { badge, playMotion, stopMotion } from "./video.js";
import { open } from "./lightbox.js";

// A section title's height (.tf-title), and how far past the screen rows are kept, in screens.
export const TITLE_HEIGHT = 40;
const KEEP = 1;

let timeline = null, settled = false;  // (settled: the first screen has been drawn)
// While the scrubber is dragged the rows passed over are drawn as boxes and nothing is fetched
// for them: a drag across years over a slow line would queue their pages and pictures before
// the place it ends at.
let holding = false;
const rows = new Map();    // "block:row" -> the row's element
const titles = new Map();  // section -> its title's element

export const currentTimeline = () => timeline;
// Where the grid's first row is on the page, and the grid's own padding.
export const gridTop = () => $("tf-grid").getBoundingClientRect().top + scrollY + timeline.rule.padding;

// The section titles shown: each but a first one named as the library (the page's heading).
const titled = (number) => number > 0 || library().sections[0].title !== $("tf-title").textContent;

// A block's shown cells as far as they are known: its grid page's, or the first cells index.html
// carried; null before either.
function knownCells(block) {
  if (block.cells) return block.cells;
  const section = library().sections[block.section], page = section.pages[block.page];
  const first = firstCells(section, page);
  if (first) block.cells = shownCells(first.items);
  if (holding) return block.cells;
  if (!block.cells || block.cells.length < block.aspects.length) {
    block.partial = true;
    if (!block.asked || (block.deferred && settled)) {
      // The rest of the first page comes after the first screen's pictures, not among them
      // (queued once this update has asked for them); at once when the view has moved there.
      block.deferred = !block.asked && first && !settled;
      block.asked = true;
      const fetch = () => loadCells(section, page).then((cells) => {
        if (!block.partial) return;
        block.cells = shownCells(cells);
        block.partial = false;
        for (const [key, row] of [...rows]) if (key.startsWith(`${block.index}:`) && row.dataset.complete !== "true") removeRow(key);
        update();
      });
      if (block.deferred) queueMicrotask(() => afterScreen(fetch));
      else fetch();
    }
  }
  return block.cells;
}

function makeCell(item, width, height) {
  const cell = Object.assign(document.createElement("button"), { className: "tf-cell", type: "button" });
  Object.assign(cell.dataset, { index: item.flat, path: item.path });
  Object.assign(cell.style, { width: `${width.toFixed(2)}px`, height: `${height.toFixed(2)}px` });
  cell.setAttribute("aria-label", describe(item));
  const img = Object.assign(document.createElement("img"), { alt: "", decoding: "async" });
  img.addEventListener("load", () => img.classList.add("tf-loaded"));
  // The picture index.html carries is shown at once, without the fade: it is there with the page.
  const inline = inlinePicture(item);
  if (inline) Object.assign(img, { src: inline.src, className: "tf-loaded tf-inline" });
  cell.append(img);
  const label = (className, text) => cell.append(Object.assign(document.createElement("span"), { className, textContent: text }));
  if (item.stack) {
    label("tf-stack", `${item.stack.members.length}`);
    cell.dataset.stack = item.stack.members.length;
  }
  const mark = badge(item);
  if (mark) {
    label("tf-badge", mark);
    cell.dataset.kind = item.motion ? "motion" : item.kind;
  }
  if (item.motion) {
    // The motion's file is in the full page: read when the pointer first comes.
    cell.addEventListener("pointerenter", () => {
      cell.tfHovered = true;
      itemAt(item.flat).then((full) => { if (cell.tfHovered) playMotion(cell, full, false); });
    });
    cell.addEventListener("pointerleave", () => { cell.tfHovered = false; stopMotion(cell); });
  }
  cell.addEventListener("click", () => open(item.flat));
  paintPlaceholder(cell, item);
  return cell;
}

// A row at its place: its cells when they are known, else boxes of their exact size.
function drawRow(block, number, row, fresh) {
  const element = Object.assign(document.createElement("div"), { className: "tf-row" });
  element.style.top = `${block.top + row.top + timeline.rule.padding}px`;
  element.tfTop = block.top + row.top;
  Object.assign(element.dataset, { section: block.section, page: block.page });
  const cells = knownCells(block);
  row.cells.forEach((_, k) => {
    const shown = cells && cells[row.first + k];
    if (!shown) {
      const box = Object.assign(document.createElement("div"), { className: "tf-cell tf-pending" });
      Object.assign(box.style, { width: `${row.widths[k].toFixed(2)}px`, height: `${row.height.toFixed(2)}px` });
      element.append(box);
      return;
    }
    const cell = makeCell(shown, row.widths[k], row.height);
    element.append(cell);
    fresh.push({ cell, item: shown, y: block.top + row.top, width: row.widths[k], height: row.height });
  });
  element.dataset.complete = cells && row.cells.length && cells[row.first + row.cells.length - 1] ? "true" : "false";
  return element;
}

// Puts a row or title in the grid in the order of the page (where it is drawn), so that Tab and
// a screen reader go through the cells as they are seen, whatever order they were drawn in.
function place(element) {
  const grid = $("tf-grid");
  let after = null;
  for (let child = grid.lastElementChild; child && child.tfTop > element.tfTop; child = child.previousElementSibling) after = child;
  grid.insertBefore(element, after);
}

// How much of a frame's height (`y`, `height`) the view [top, bottom] shows.
export const seenHeight = (frame, [top, bottom]) => Math.max(0, Math.min(frame.y + frame.height, bottom) - Math.max(frame.y, top));

// Holds fetching while the scrubber is dragged; at its release the rows in view are drawn again
// with their cells and pictures.
export function hold(on) {
  holding = on;
  if (on) return;
  for (const key of [...rows.keys()]) removeRow(key);
  update();
}

// A row out of the page, its pictures still on their way cancelled (a browser drops the request
// of an image whose source is taken away): a fling leaves no queue of pictures nobody sees in
// front of those of where it stops.
function removeRow(key) {
  const row = rows.get(key);
  for (const img of row.querySelectorAll("img")) {
    if (img.complete) continue;
    img.removeAttribute("srcset");
    img.removeAttribute("src");
    if (img.tfCancelled) img.tfCancelled();
  }
  row.remove();
  rows.delete(key);
}

// Puts in the page the rows and titles within a screen of the view and takes out the rest; the
// new cells' pictures are asked for, those on the screen first and the largest of them first.
export function update() {
  if (!timeline) return;
  const top = gridTop(), y0 = scrollY - top - KEEP * innerHeight, y1 = scrollY - top + (1 + KEEP) * innerHeight;
  const wanted = new Set(), fresh = [];
  for (const { block, number, row } of rowsIn(timeline, y0, y1)) {
    const key = `${block.index}:${number}`;
    wanted.add(key);
    if (rows.has(key)) {
      if (rows.get(key).dataset.complete !== "true") knownCells(block);
      continue;
    }
    const element = drawRow(block, number, row, fresh);
    rows.set(key, element);
    place(element);
  }
  for (const key of [...rows.keys()]) if (!wanted.has(key)) removeRow(key);
  drawTitles(y0, y1);
  const view = [scrollY - top, scrollY - top + innerHeight];
  if (holding) return;
  const onScreen = fresh.filter((f) => seenHeight(f, view) > 0);
  for (const f of byArea(onScreen.map((f) => ({ ...f, boundingClientRect: { width: f.width, height: seenHeight(f, view) } }))))
    loadPicture(f.cell, f.item, true);
  for (const f of fresh.filter((f) => !onScreen.includes(f))) loadPicture(f.cell, f.item, false);
}

function drawTitles(y0, y1) {
  timeline.sectionTops.forEach((sectionTop, number) => {
    const near = titled(number) && sectionTop + TITLE_HEIGHT >= y0 && sectionTop <= y1;
    if (near && !titles.has(number)) {
      const title = Object.assign(document.createElement("h2"), { className: "tf-title", textContent: library().sections[number].title });
      title.style.top = `${sectionTop + timeline.rule.padding}px`;
      title.tfTop = sectionTop - 0.5;  // (before its section's first row)
      titles.set(number, title);
      place(title);
    } else if (!near && titles.has(number)) {
      titles.get(number).remove();
      titles.delete(number);
    }
  });
}

// Lays the whole library out for the grid's width: its height, then the rows in view.
function layOut() {
  const grid = $("tf-grid");
  timeline = buildTimeline(library(), grid.clientWidth, (number) => (titled(number) ? TITLE_HEIGHT : 0));
  timeline.blocks.forEach((block, index) => { block.index = index; });
  for (const key of [...rows.keys()]) removeRow(key);
  for (const title of titles.values()) title.remove();
  titles.clear();
  grid.style.height = `${Math.ceil(timeline.height + 2 * timeline.rule.padding)}px`;
  update();
}

export function renderGrid() {
  layOut();
  settled = true;
  let pending = false;
  addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; update(); });
  }, { passive: true });
}

// Brings an item's cell into the page (scrolling to its row when it is not in view): the lightbox
// gives focus back to it when it closes. Its block's cells must be known (they are, for any
// item the lightbox showed: paging goes through the grid's cells).
export function reveal(flat) {
  const section = sectionOf(flat), number = library().sections.indexOf(section), offset = flat - section.start;
  const page = section.pages.findIndex((p) => offset >= p.start && offset < p.start + p.count);
  const block = timeline && timeline.blocks.find((b) => b.section === number && b.page === page);
  const cells = block && knownCells(block);
  const k = cells ? cells.findIndex((cell) => cell.flat === flat) : -1;
  if (k < 0) return;
  const y = cellTop(timeline, block, k) + gridTop();
  if (y < scrollY || y > scrollY + innerHeight - 100) scrollTo(0, y - innerHeight / 3);
  update();
}

// A rotated phone or a resized window: the library laid out again for the new width, the row
// that was at the top of the view still there.
function relayout() {
  if (!timeline || $("tf-grid").clientWidth === timeline.windowWidth) return;
  const at = blocksIn(timeline, scrollY - gridTop(), scrollY - gridTop())[0];
  const fraction = at ? (scrollY - gridTop() - at.top) / Math.max(1, at.height) : 0;
  layOut();
  if (at) scrollTo(0, gridTop() + timeline.blocks[at.index].top + fraction * timeline.blocks[at.index].height);
  update();
}

// With --locations, a list of the places photos were taken (no map tiles: no third-party
// server learns what is looked at), most photos first; a place opens its first photo, found in
// the grid pages in order.
export function renderPlaces() {
  const counts = library().summary && library().summary.places;
  if (!counts) return;
  const list = $("tf-places").querySelector("ul");
  const sorted = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 200);
  for (const [label, count] of sorted) {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: `${label} (${count})` });
    button.addEventListener("click", async () => {
      const found = await findCell((cell) => cell.place && placeLabel(cell.place) === label);
      if (found) open(found.flat);
    });
    const entry = document.createElement("li");
    entry.append(button);
    list.append(entry);
  }
  $("tf-places").hidden = false;
}

export function installGrid() {
  addEventListener("resize", relayout);
  document.addEventListener("tf-reveal", (event) => reveal(event.detail));
}
