// When and how a cell's picture is fetched: the srcset it gets, the order pictures are asked for
// (the screen's largest first and alone, the rest of the screen's, the margin's last), and a
// picture index.html carried shown without a fetch.
import { url, options, inlinePicture } from "./data.js";
import { cellSizes, srcsetChoice } from "./layout.js";

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

// A cell's picture when its turn comes: the smallest rendition of its srcset that covers its
// device pixels (`cellSizes`); none for a cell gone from the page by then, or for the picture
// index.html carried where it is what the srcset would take.
export function loadPicture(cell, item, onScreen) {
  const settings = options();
  const img = cell.querySelector("img");
  const family = (settings.srcset || []).filter((name) => item.thumbnails[name]);
  const inline = inlinePicture(item);
  const chosen = srcsetChoice(family.map((name) => item.thumbnails[name]), parseFloat(cell.style.width), devicePixelRatio);
  if (inline && chosen && chosen.path === inline.path) return;
  pictures.push((done) => {
    if (!img.isConnected) return done();
    img.addEventListener("load", done, { once: true });
    img.addEventListener("error", done, { once: true });
    img.tfCancelled = done;  // (a picture taken away before it came ends its turn too)
    if (onScreen) img.fetchPriority = "high";
    // (An image starts loading as its srcset is set: all of it at once, when its turn comes.)
    if (family.length) {
      img.srcset = srcsetOf(item, family);
      img.sizes = cellSizes(parseFloat(cell.style.width));
    }
    img.src = url((item.thumbnails[family[0]] || item.thumbnails[settings.display] || Object.values(item.thumbnails)[0]).path);
  }, onScreen);
}

// Work that waits for the screen's pictures (the margin's turn): the rest of the first page's cells.
export const afterScreen = (task) => pictures.push((done) => { done(); task(); }, false);
