// thumbframe viewer: written by `thumbframe build --viewer`; reads manifest.json and its grid
// pages (or thumbframe-viewer-data.js, which the build writes for file:// use), paints a
// justified grid from the placeholders first, and opens a lightbox laid out with the manifest's
// frames from the full pages, fetched only when a photo opens. Its modules (viewer/src/ in
// thumbframe's repository) are bundled into this one script, which file:// pages can load.
import { $, load, library, libraryName, itemAt, loadedItems, loadedCells } from "./data.js";
import { thumbHashToRGBA } from "./thumbhash.js";
import { installVideo } from "./video.js";
import { installZoom, zoomTo, zoomLevel } from "./zoom.js";
import { installLightbox, isOpen, open, show, close, openLink, layoutOf } from "./lightbox.js";
import { installGrid, renderGrid, renderPlaces } from "./grid.js";
import { installScrubber, scrubberMarks } from "./scrubber.js";

async function start() {
  installVideo();
  // Zoom's pointer handlers first: the lightbox's gestures read how many pointers are down.
  installZoom(isOpen);
  installLightbox();
  installGrid();
  try {
    await load();
    const doc = library(), name = libraryName(doc);
    $("tf-title").textContent = name;
    document.title = `${name} · ${doc.itemCount} ${doc.itemCount === 1 ? "item" : "items"}`;
    renderGrid();
    installScrubber();
    renderPlaces();
    document.body.dataset.ready = "true";
    if (location.hash) openLink(true);
  } catch (error) {
    const message = document.createElement("p");
    message.id = "tf-error";
    message.textContent = `Cannot read the manifest (${error.message}). From file://, rebuild with --viewer; or serve this folder (python3 -m http.server).`;
    $("tf-grid").append(message);
    document.body.dataset.ready = "error";
  }
}

// What the browser tests drive and read.
window.thumbframeViewer = { open, show, close, items: loadedItems, cells: loadedCells, itemAt, zoomTo, zoom: zoomLevel,
  layout: layoutOf, marks: scrubberMarks,
  thumbHashToRGBA: (base64) => {
    const r = thumbHashToRGBA(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
    return [r.w, r.h, Array.from(r.rgba)];
  } };
start();
