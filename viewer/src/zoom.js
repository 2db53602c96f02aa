// The lightbox's photo at its frame and zoom: where it sits, the rendition sharp at the zoom (its
// ladder, then deep-zoom tiles), pinch, ctrl+wheel and steps. Zoom counts from 1, the fitted
// frame (PhotoSwipe's image pixels per CSS pixel are made relative to its `min`).
import { $, url, options, displayThumbnail, showsOriginal } from "./data.js";
import { tileLevel, tilesInView, zoomStretch } from "./layout.js";

// The zoom ladder: a photo shown from its thumbnails (not its original) has renditions,
// smallest first, each sharp up to a zoom (relative to the fitted frame). For a window a
// viewport matches they are the layout's `ladder` (scaled to this screen's pixel ratio `scale`),
// else the same numbers from the thumbnails' widths. On an HDR screen (`hdr`) a photo's gain-map
// renditions are shown bright, and its SDR files — the smaller srcset ones, the deep-zoom tiles
// — would dim it: there its rungs are the gain-map renditions alone, the largest the last.
export function rungsOf(item, L, settings, scale, hdr, original) {
  if (original || item.kind !== "photo") return null;
  const min = L.zoom.min || 1;
  const viewport = L.viewport && settings.viewports.find((v) => v.name === L.viewport);
  let found;
  if (viewport && L.ladder) {
    found = L.ladder.map((r) => ({ name: r.name, native: r.native / min * viewport.scale / scale }));
  } else {
    const names = [...(settings.srcset || []), ...(settings.ladder ? settings.ladder.renditions.map((r) => r.name) : []), "tiles"];
    const present = names.map((name, order) => ({ name, order, t: item.thumbnails[name] })).filter((r) => r.t)
      .sort((a, b) => a.t.width - b.t.width || a.order - b.order);
    if (!present.length || (!settings.ladder && !item.thumbnails.tiles)) return null;
    found = present.map((r) => ({ name: r.name, native: r.t.width / (L.frame.width * scale) }));
  }
  const mapped = (r) => r.name !== "tiles" && (item.thumbnails[r.name] || {}).headroom;
  return hdr && found.some(mapped) ? found.filter(mapped) : found;
}
// The rung for a zoom: the first sharp at it within `stretch` (as a deep-zoom level), else the largest.
export const rungFor = (rungs, zoom, stretch = 1) =>
  rungs.find((r) => r.native * stretch >= zoom - 1e-4) || rungs[rungs.length - 1];
// A zoom target within the layout's range: from the fitted frame to its maximum.
export const clampZoom = (target, L) => Math.min(Math.max(target, 1), Math.max(1, L.zoom.max / (L.zoom.min || 1)));
// The layout's zoom range, its maximum brought down to what the files shown hold: the largest
// rendition's pixels stretched by `stretch` (relative to the fit), never below the fit. A photo
// shown from its original or with deep-zoom tiles keeps the layout's; `native`: the one file's
// pixels per device pixel at the fit when it has no ladder.
export function zoomRange(L, rungs, native, stretch) {
  const sharpest = rungs ? (rungs[rungs.length - 1].name === "tiles" ? Infinity : rungs[rungs.length - 1].native) : native;
  const min = L.zoom.min || 1;
  const max = Math.max(min, Math.min(L.zoom.max, sharpest * stretch * min));
  return { ...L.zoom, max, doubleTap: Math.min(L.zoom.doubleTap, max) };
}

// The screen shows HDR (CSS `dynamic-range: high`): the one thing the viewer does otherwise
// for gain-map renditions, which are plain images every browser shows right by itself.
const hdrScreen = () => typeof matchMedia === "function" && matchMedia("(dynamic-range: high)").matches;

let image, player, content, scroller, tileLayer;
let zoom = 1, L = null, item = null, rungs = null, rung = null, tileShown = -1, tilesHeld = false, tilesQueued = false;
export const zoomLevel = () => zoom;
const relative = (value) => value / (L.zoom.min || 1);

// Shows `shown` at the layout `layout`, fitted, its first rendition loading (`file`: the one file
// it shows when it has no ladder, its `src` and pixel `width`; the zoom stops where that file's
// pixels would stretch past `zoomStretch`).
export function present(shown, layout, file) {
  item = shown;
  zoom = 1;
  const scale = devicePixelRatio || 1, original = showsOriginal(item);
  rungs = rungsOf(item, layout, options(), scale, hdrScreen(), original);
  // A photo shown from one file (no ladder, not its original) zooms as far as that file holds.
  const capped = !original && item.kind === "photo";
  L = capped ? { ...layout, zoom: zoomRange(layout, rungs, file.width / (layout.frame.width * scale), zoomStretch(scale)) } : layout;
  place();
  rung = null;
  delete image.dataset.rendition;
  drawTiles();
  if (rungs) sharpen(true);
  else image.src = file.src;
}

export function place() {
  const w = L.frame.width * zoom, h = L.frame.height * zoom;
  const cw = Math.max(innerWidth, L.contentSize.width * zoom), ch = Math.max(L.long ? L.contentSize.height * zoom : innerHeight, h);
  content.style.width = `${zoom === 1 ? Math.max(innerWidth, L.contentSize.width) : cw}px`;
  content.style.height = `${zoom === 1 ? Math.max(innerHeight, L.contentSize.height) : ch}px`;
  const x = zoom === 1 ? L.frame.x : Math.max(0, (cw - w) / 2), y = zoom === 1 ? L.frame.y : Math.max(0, (ch - h) / 2);
  for (const element of [image, player]) Object.assign(element.style, { left: `${x}px`, top: `${y}px`, width: `${w}px`, height: `${h}px` });
  image.dataset.zoom = `${zoom}`;
  if (item && zoom > 1) sharpen(false);
  scroller.style.overflowX = zoom === 1 ? "hidden" : "auto";
  // Fitted and not long: every touch is the viewer's (pull down to dismiss, swipe, pinch), or
  // the browser would take a vertical drag as a scroll and cancel it. Zoomed or long: the
  // browser pans natively; pinch stays the viewer's.
  scroller.style.touchAction = zoom === 1 && !L.long ? "none" : "pan-x pan-y";
}

// Loads the rendition for the current zoom beside the shown one and swaps when it has arrived
// (the image keeps its place, so the point under the fingers stays); zooming out keeps the
// sharper one. Past the largest rendition a photo with deep-zoom tiles draws them over it.
function sharpen(first) {
  if (!rungs) return;
  const wanted = rungFor(rungs, zoom, zoomStretch(devicePixelRatio || 1));
  if (rung && rungs.indexOf(wanted) <= rungs.indexOf(rung)) return;
  rung = wanted;
  if (wanted.name === "tiles") {
    // The largest rendition stays beneath as the backdrop the tiles arrive over.
    if (first) {
      const below = rungs[rungs.length - 2];
      image.src = url((below ? item.thumbnails[below.name] : displayThumbnail(item)).path);
    }
    image.dataset.rendition = "tiles";
    return drawTiles();
  }
  const src = url(item.thumbnails[wanted.name].path), shown = item;
  if (first) {
    image.src = src;
    image.dataset.rendition = wanted.name;
    return;
  }
  const next = new Image();
  next.onload = () => {
    if (item !== shown || rung !== wanted) return;
    image.src = src;
    image.dataset.rendition = wanted.name;
  };
  next.src = src;
}

// The deep-zoom tiles (thumbnails.tiles: the .dzi; tiles in <name>_files/<level>/<col>_<row>.<format>)
// of the level the shown size needs, only those in view, laid over the image at its place and
// size; redrawn as the view scrolls or zooms, once its position has settled.
function drawTiles() {
  if (tilesHeld) return;  // a zoom step moves the view next: its tiles are those after it
  const entry = item && item.thumbnails.tiles;
  // Fitted, the renditions suffice (and a pull to dismiss moves the image alone).
  const sane = entry && entry.tiles && entry.tiles.tileSize >= 16 && entry.tiles.levels >= 1 && entry.tiles.levels <= 64;
  if (!sane || !rung || rung.name !== "tiles" || image.hidden || zoom <= 1) {
    tileLayer.replaceChildren();
    tileShown = -1;
    tileLayer.remove();
    return;
  }
  if (!tileLayer.isConnected) content.append(tileLayer);
  const t = entry.tiles, left = parseFloat(image.style.left), top = parseFloat(image.style.top), shown = parseFloat(image.style.width);
  const level = tileLevel(entry.width, t.levels, shown * (devicePixelRatio || 1), zoomStretch(devicePixelRatio || 1));
  const width = Math.ceil(entry.width / 2 ** (t.levels - 1 - level)), height = Math.ceil(entry.height / 2 ** (t.levels - 1 - level));
  const scale = shown / width;
  if (level !== tileShown) {
    tileLayer.replaceChildren();
    tileShown = level;
  }
  tileLayer.dataset.level = level;
  const base = url(entry.path.replace(/\.dzi$/, "_files/") + level + "/");
  const x0 = (scroller.scrollLeft - left) / scale, y0 = (scroller.scrollTop - top) / scale;
  const wanted = new Set();
  for (const box of tilesInView(width, height, t.tileSize, t.overlap, { x0, y0, x1: x0 + innerWidth / scale, y1: y0 + innerHeight / scale })) {
    wanted.add(box.name);
    let tile = tileLayer.querySelector(`[data-tile="${box.name}"]`);
    if (!tile) {
      tile = Object.assign(document.createElement("img"), { className: "tf-tile", alt: "", src: base + `${box.name}.${t.format}` });
      tile.dataset.tile = box.name;
      tileLayer.append(tile);
    }
    Object.assign(tile.style, { left: `${left + box.x * scale}px`, top: `${top + box.y * scale}px`,
      width: `${box.width * scale}px`, height: `${box.height * scale}px` });
  }
  for (const tile of [...tileLayer.children]) if (!wanted.has(tile.dataset.tile)) tile.remove();
}

// Zooms to `target` (relative to the fitted frame, within the preset's limits) keeping the
// image point under (clientX, clientY) where it is.
export function zoomTo(target, clientX, clientY) {
  const rect = image.getBoundingClientRect();
  const fx = (clientX - rect.left) / rect.width, fy = (clientY - rect.top) / rect.height;
  zoom = clampZoom(target, L);
  tilesHeld = true;  // the tiles of the view before the scroll below would be fetched for nothing
  place();
  const after = image.getBoundingClientRect();
  scroller.scrollLeft += after.left + fx * after.width - clientX;
  scroller.scrollTop += after.top + fy * after.height - clientY;
  tilesHeld = false;
  if (rung && rung.name === "tiles") drawTiles();
}
// A double tap: to the preset's double-tap zoom, or back to the fit. A video never zooms.
export function toggleZoom(clientX, clientY) {
  if (!player.hidden) return;
  const target = zoom === 1 ? Math.min(relative(L.zoom.doubleTap), relative(L.zoom.max)) : 1;
  if (target <= 1 && zoom === 1) return;
  zoomTo(target, clientX, clientY);
}
// `+` zooms in a step (first to the preset's double-tap zoom, then by half again, up to its
// maximum), `-` out a step down to the fitted frame; at the fitted frame `-` does nothing.
export function stepZoom(into) {
  if (!player.hidden || (!into && zoom === 1)) return;
  const target = into ? (zoom === 1 ? Math.max(1.5, relative(L.zoom.doubleTap)) : zoom * 1.5) : zoom / 1.5;
  zoomTo(target < 1.05 ? 1 : target, innerWidth / 2, innerHeight / 2);
}

// The pointers down on the photo: two are a pinch between the fitted frame and the maximum.
const pointers = new Map();
let pinch = null;
export const pointerCount = () => pointers.size;
function pinchDistance() {
  const [a, b] = [...pointers.values()];
  return { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
}

export function installZoom(isOpen) {
  image = $("tf-image");
  player = $("tf-video");
  content = $("tf-content");
  scroller = $("tf-scroll");
  tileLayer = Object.assign(document.createElement("div"), { id: "tf-tiles" });
  image.dataset.zoom = "1";
  // Tiles follow the view as it scrolls, once a frame.
  scroller.addEventListener("scroll", () => {
    if (!tileLayer.isConnected || tilesQueued) return;
    tilesQueued = true;
    requestAnimationFrame(() => {
      tilesQueued = false;
      drawTiles();
    });
  });
  // ctrl+wheel: a trackpad's pinch.
  scroller.addEventListener("wheel", (event) => {
    if (!event.ctrlKey || !isOpen()) return;
    event.preventDefault();
    zoomTo(zoom * Math.exp(-event.deltaY / 200), event.clientX, event.clientY);
  }, { passive: false });
  scroller.addEventListener("pointerdown", (event) => {
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 2) pinch = { start: pinchDistance().d, zoom };
  });
  scroller.addEventListener("pointermove", (event) => {
    if (!pointers.has(event.pointerId)) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pinch && pointers.size === 2) {
      const now = pinchDistance();
      zoomTo(pinch.zoom * now.d / Math.max(1, pinch.start), now.x, now.y);
    }
  });
  const lift = (event) => {
    pointers.delete(event.pointerId);
    if (pointers.size < 2) pinch = null;
  };
  scroller.addEventListener("pointerup", lift);
  scroller.addEventListener("pointercancel", lift);
}
