// The grid: each section a title and one block per manifest page, sized by an estimate until the
// page comes near the screen; then its grid page (the cells: path, shape, placeholder,
// thumbnails) is fetched and laid out in justified rows (rows break at page boundaries). A
// library of a million photos loads what is looked at. Placeholders first, then the screen's
// images before the margin's; and the list of places.
import { $, url, library, options, itemAt, loadCells, firstCells, findCell, describe, placeLabel, paintPlaceholder,
  cellAt, inlinePicture } from "./data.js";
import { justify, estimatedHeight, shownCells, cellSizes, srcsetChoice } from "./layout.js";
import { badge, playMotion, stopMotion } from "./video.js";
import { open } from "./lightbox.js";

export const rowTarget = (width) => (width < 600 ? 110 : 200);
const gridWidth = () => $("tf-grid").clientWidth - 8;
const GAP = 4;

// Entries (each with its boundingClientRect), the largest first; equal ones in their order.
export const byArea = (entries) => entries.map((entry, order) => ({ entry, order, area: entry.boundingClientRect.width *
  entry.boundingClientRect.height })).sort((a, b) => b.area - a.area || a.order - b.order).map(({ entry }) => entry);

// A cell's srcset: the thumbnails of the srcset family it has, each with its width.
export const srcsetOf = (item, family) =>
  family.map((name) => `${url(item.thumbnails[name].path)} ${item.thumbnails[name].width}w`).join(", ");

// When the cells' pictures are asked for. The screen's largest picture first, alone: a server
// that sends every stream of a connection at once (Caddy's, Go's HTTP/2) would share a slow line
// among all of a screen's pictures and finish none until the end, so the largest (what a browser
// counts as the largest contentful paint) has the line to itself. The rest of the screen's when
// it has come (or after `head` ms), all at once to keep the line full; the margin's once every
// picture of the screen has come (or none has for `stall` ms: on a slow 4G line, where a
// screen's 29 pictures of real photos take 7 s, 3 s let the margin's in among them). A task gets
// `done` to call when its picture has come or failed.
export function pictureQueue(head = 1200, stall = 10000) {
  const screen = [], margin = [];
  let phase = "first", running = 0, headTimer = 0, stallTimer = 0;
  // (`running`: the screen's pictures on their way; the margin's are not waited for.)
  const start = (task) => {
    running++;
    let ended = false;
    task(() => {
      if (ended) return;
      ended = true;
      running--;
      if (phase === "first") open();
      pump();
    });
  };
  const release = () => {
    while (margin.length) margin.shift()(() => {});
  };
  const open = () => {
    clearTimeout(headTimer);
    phase = "screen";
  };
  const pump = () => {
    if (phase === "first" && screen.length && !running) start(screen.shift());
    if (phase !== "first") while (screen.length) start(screen.shift());
    clearTimeout(stallTimer);
    if (!margin.length) return;
    if (!running && !screen.length) release();
    else stallTimer = setTimeout(() => { open(); release(); }, stall);
  };
  return {
    push(task, onScreen) {
      if (!onScreen) margin.push(task);
      else {
        screen.push(task);
        if (phase === "first" && !headTimer) headTimer = setTimeout(() => { open(); pump(); }, head);
      }
      pump();
    },
    running: () => running,
    waiting: () => screen.length + margin.length,
  };
}
const pictures = pictureQueue();
function loadCellImage(img, start, shown) {
  pictures.push((done) => {
    img.addEventListener("load", done, { once: true });
    img.addEventListener("error", done, { once: true });
    if (shown) img.fetchPriority = "high";
    start();
  }, shown);
}

// A cell near the screen: its placeholder at once, its image (the smallest rendition that covers
// its device pixels: `cellSizes`) when its turn comes.
function cellNear(cell, box) {
  const item = cellAt(+cell.dataset.index), settings = options();
  paintPlaceholder(cell, item);
  const img = cell.querySelector("img");
  const family = (settings.srcset || []).filter((name) => item.thumbnails[name]);
  // A picture index.html carried is not fetched again where it is what the srcset would take.
  const inline = inlinePicture(item);
  const chosen = srcsetChoice(family.map((name) => item.thumbnails[name]), parseFloat(cell.style.width), devicePixelRatio);
  if (inline && chosen && chosen.path === inline.path) return;
  // (An image starts loading as its srcset is set: all of it at once, when its turn comes.)
  const start = () => {
    if (family.length) {
      img.srcset = srcsetOf(item, family);
      img.sizes = cellSizes(parseFloat(cell.style.width));
    }
    img.src = url((item.thumbnails[family[0]] || item.thumbnails[settings.display] || Object.values(item.thumbnails)[0]).path);
  };
  loadCellImage(img, start, onScreenNow(box));
}
const onScreenNow = (box) => box.top < innerHeight && box.bottom > 0 && box.right > 0 && box.left < innerWidth;
let cellObserver = null, pageObserver = null;

function makeCell(item, width, height) {
  const cell = Object.assign(document.createElement("button"), { className: "tf-cell", type: "button" });
  Object.assign(cell.dataset, { index: item.flat, path: item.path });
  Object.assign(cell.style, { width: `${width.toFixed(2)}px`, height: `${height.toFixed(2)}px` });
  cell.setAttribute("aria-label", describe(item));
  const img = Object.assign(document.createElement("img"), { alt: "", decoding: "async" });
  img.addEventListener("load", () => img.classList.add("tf-loaded"));
  const inline = inlinePicture(item);
  // (Shown at once, without the fade: it is on the screen with the page.)
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
  return cell;
}

// Lays out a page's cells in `block`: all of them, or (`partial`) the rows of the first cells that
// no later cell can change (all but the last). Rows already in the block stay as they are when
// the new layout begins with them (the first screen, drawn from index.html, is not drawn again
// when its page arrives); anything else is laid out anew.
function renderPage(block, pageCells, partial) {
  const width = gridWidth(), target = rowTarget(innerWidth);
  let rows = justify(shownCells(pageCells), width, target, GAP);
  if (partial) rows = rows.slice(0, -1);
  const keys = rows.map((row) => row.cells.map((cell) => cell.flat).join(" "));
  const drawn = block.tfRows || [];
  const kept = block.tfWidth === width && drawn.every((key, k) => keys[k] === key) ? drawn.length : 0;
  if (!kept) {
    for (const cell of block.querySelectorAll(".tf-cell")) cellObserver.unobserve(cell);
    block.replaceChildren();
  }
  for (const row of rows.slice(kept)) {
    const rowElement = Object.assign(document.createElement("div"), { className: "tf-row" });
    row.cells.forEach((item, k) => {
      const cell = makeCell(item, row.widths[k], row.height);
      // The first screen's cells show their placeholders in the first frame painted.
      if (partial) paintPlaceholder(cell, item);
      rowElement.append(cell);
      cellObserver.observe(cell);
    });
    block.append(rowElement);
  }
  Object.assign(block, { tfRows: keys, tfWidth: width, tfShown: { cells: pageCells, partial } });
  if (partial) {
    // The rest of the page, estimated below the rows drawn, until it arrives.
    const height = rows.reduce((sum, row) => sum + row.height + GAP, 0);
    const left = block.tfPage.page.count - rows.reduce((sum, row) => sum + row.cells.length, 0);
    block.style.minHeight = `${Math.ceil(height + estimatedHeight(left, width, target))}px`;
    return;
  }
  block.style.minHeight = "";
  block.dataset.rendered = "true";
}

export function renderSections() {
  const width = gridWidth(), target = rowTarget(innerWidth);
  for (const section of library().sections) {
    const element = Object.assign(document.createElement("section"), { className: "tf-section" });
    // The library's own name is the page's heading already: its section is not named twice.
    if (section.title !== $("tf-title").textContent)
      element.append(Object.assign(document.createElement("h2"), { textContent: section.title }));
    for (const page of section.pages) {
      const block = Object.assign(document.createElement("div"), { className: "tf-page" });
      block.tfPage = { section, page };
      block.style.minHeight = `${estimatedHeight(page.count, width, target)}px`;
      element.append(block);
      const first = firstCells(section, page);
      if (first) renderPage(block, first.items, !first.complete);
      if (!first || !first.complete) pageObserver.observe(block);
    }
    $("tf-grid").append(element);
  }
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

// A rotated phone or a resized window: the rows are laid out again for the new width (the
// pages not yet rendered get new estimates).
let laidOutWidth = 0;
function relayout() {
  if (!library() || gridWidth() === laidOutWidth) return;
  laidOutWidth = gridWidth();
  for (const block of document.querySelectorAll(".tf-page")) {
    if (block.tfShown) renderPage(block, block.tfShown.cells, block.tfShown.partial);
    else block.style.minHeight = `${estimatedHeight(block.tfPage.page.count, laidOutWidth, rowTarget(innerWidth))}px`;
  }
}

export function installGrid() {
  // The largest cells first: their images are asked for first, and the screen's largest picture
  // (what a browser counts as its largest contentful paint) arrives first.
  cellObserver = new IntersectionObserver((entries) => {
    const near = entries.filter((e) => e.isIntersecting), shown = near.filter((e) => onScreenNow(e.boundingClientRect));
    for (const entry of [...byArea(shown), ...near.filter((e) => !shown.includes(e))]) {
      cellObserver.unobserve(entry.target);
      cellNear(entry.target, entry.boundingClientRect);
    }
  }, { rootMargin: "400px" });
  pageObserver = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      pageObserver.unobserve(entry.target);
      const { section, page } = entry.target.tfPage, block = entry.target;
      const render = () => loadCells(section, page).then((pageCells) => renderPage(block, pageCells, false));
      // The rest of the first screen's page comes after the screen's pictures, not among them.
      if (block.tfShown && block.tfShown.partial) pictures.push((done) => { done(); render(); }, false);
      else render();
    }
  }, { rootMargin: "1200px 0px" });
  laidOutWidth = gridWidth();
  addEventListener("resize", relayout);
}
