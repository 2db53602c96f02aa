// The library as the viewer reads it: manifest.json (or thumbframe-viewer-data.js, which the build
// writes for file://), its grid pages (the cells) and full pages (the items), each fetched once
// when first needed, and what follows from them: URLs, the file the lightbox shows, words for a
// screen reader. Set once by `load` (or `configure`), then read.
import { thumbHashToRGBA } from "./thumbhash.js";

export const $ = (id) => document.getElementById(id);

let manifest = null, settings = null, base = "", readPage = null;
// `cells`: what the grid draws of each item (its grid page's cell); `items`: the full items,
// fetched a page at a time when the lightbox needs them. Both by flat index.
const cells = [], items = [];
const loadedFiles = new Map();  // page or grid page path -> Promise of its entries

export const library = () => manifest;
export const options = () => settings;
export const cellAt = (index) => cells[index];
export const loadedItem = (index) => items[index];
export const loadedCells = () => cells;
export const loadedItems = () => items;

// The library to read: a manifest, the URL its paths are relative to, and how a page is read.
export function configure(doc, baseURL, pageReader) {
  manifest = doc;
  settings = doc.settings;
  base = baseURL;
  readPage = pageReader;
  cells.length = 0;
  items.length = 0;
  loadedFiles.clear();
}

// The manifest and its pages as one script, which the build writes for file://, where fetch
// is refused. Loaded only there: over HTTP it would be the whole library before the first
// paint, and manifest.json is the truth (a data script left by an older build never wins).
function dataScript() {
  if (location.protocol !== "file:") return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = "thumbframe-viewer-data.js";
    script.onload = () => resolve(window.thumbframeData);
    script.onerror = () => resolve(undefined);
    document.head.append(script);
  });
}

// The first screen the build wrote into index.html (`ViewerWriter.indexHTML`): the manifest and
// the first grid page's first cells, read before anything is fetched.
let first = null;
function inlined() {
  const element = $("tf-first");
  try {
    return element ? JSON.parse(element.textContent) : null;
  } catch {
    return null;
  }
}
// The cells index.html carries for a page (`{items}`: its first cells), or null: each given its flat index.
export function firstCells(section, page) {
  if (!first || !first.cells || first.grid !== page.grid || section !== manifest.sections[0]) return null;
  for (const cell of first.cells.items) {
    cell.flat = section.start + cell.item;
    cells[cell.flat] = cell;
  }
  return { items: first.cells.items };
}
// The picture index.html carries for a cell (`{path, src}`: the thumbnail's path and a data:
// URL of its bytes), or null: the phone's largest picture of its first screen, painted with the
// page, no round trip after it.
export function inlinePicture(item) {
  const picture = first && first.picture;
  return picture && first.cells && item.flat === manifest.sections[0].start + picture.item ? picture : null;
}

export async function load() {
  const baseURL = new URL("./", location.href).href;
  const data = await dataScript();
  if (data) return configure(data.manifest, baseURL, async (path) => data.pages[path]);
  const fetchJSON = async (path) => (await fetch(new URL(path, baseURL))).json();
  first = inlined();
  if (first && first.manifest) return configure(first.manifest, baseURL, fetchJSON);
  // index.html asked for manifest.json as it was parsed (a preload): this fetch takes that response.
  const response = await fetch(new URL("manifest.json", baseURL));
  if (!response.ok) throw new Error(`manifest.json: HTTP ${response.status}`);
  configure(await response.json(), baseURL, fetchJSON);
}

export const url = (path) => new URL(path, base).href;
// An original's URL (`--original-url` and the path below the source directory), or null.
export const originalURL = (path) =>
  settings.originalURL ? settings.originalURL + path.split("/").map(encodeURIComponent).join("/") : null;
// The display thumbnail: a video's is its poster.
export const displayThumbnail = (item) => item.thumbnails[settings.display] || Object.values(item.thumbnails)[0];

// The file the lightbox loads, and the pixel size the manifest's layouts are for. A video's
// image is its poster; the video itself plays from its original. An original no browser
// decodes everywhere (HEIC, TIFF, RAW: not in settings.browserFormats) gives way to the
// display thumbnail, the largest rendition.
export const showsOriginal = (item) => !!settings.originalURL && item.kind !== "video" &&
  (!settings.browserFormats || settings.browserFormats.includes(item.image.format));
export function loaded(item) {
  if (showsOriginal(item))
    return { src: originalURL(item.path), width: item.image.width, height: item.image.height,
      layoutSize: [item.image.width, item.image.height] };
  const thumbnail = displayThumbnail(item);
  const photoswipe = settings.preset === "photoswipe";
  return { src: url(thumbnail.path), width: thumbnail.width, height: thumbnail.height,
    layoutSize: photoswipe ? [thumbnail.width, thumbnail.height] : [item.image.width, item.image.height] };
}

// A page file's entries, read once: each given its flat index and kept in `into`.
function loadEntries(path, section, into) {
  if (!loadedFiles.has(path)) {
    loadedFiles.set(path, readPage(path).then((file) => {
      for (const entry of file.items) {
        entry.flat = section.start + entry.item;
        into[entry.flat] = entry;
      }
      return file.items;
    }));
  }
  return loadedFiles.get(path);
}
// A page's cells: its grid page (the viewer is written with its manifest, which has them).
export const loadCells = (section, page) => loadEntries(page.grid, section, cells);
const loadPage = (section, page) => loadEntries(page.path, section, items);

// The section an item's flat index falls in (sections are in order of their `start`).
export function sectionOf(index) {
  const sections = manifest.sections;
  let lo = 0, hi = sections.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sections[mid].start <= index) lo = mid; else hi = mid - 1;
  }
  return sections[lo];
}

// The item at a flat index, fetching its page when it has not been seen yet.
export async function itemAt(index) {
  if (items[index]) return items[index];
  const section = sectionOf(index);
  const offset = index - section.start;
  await loadPage(section, section.pages.find((p) => offset >= p.start && offset < p.start + p.count));
  return items[index];
}

// The first cell, in the grid's order, that `matches`; `first` puts some sections first.
export async function findCell(matches, first = () => false) {
  const sections = [...manifest.sections].sort((a, b) => first(b) - first(a));
  for (const section of sections)
    for (const page of section.pages) {
      const found = (await loadCells(section, page)).find(matches);
      if (found) return found;
    }
  return null;
}

// The library's name: its root folder's section title (the source directory's name).
export function libraryName(doc) {
  const root = doc.sections.find((section) => section.name === ".");
  return root ? root.title : doc.sections.length === 1 ? doc.sections[0].title : "Photos";
}

// A stack's reason (`Stack.Reason`) in a person's words.
export const stackWords = { burst: "one burst of a stack", "time+similar": "a stack taken seconds apart, alike",
  duplicate: "a stack of copies of one picture" };
// What a cell or the lightbox's image says to a screen reader: the file, its kind and date
// (a cell's `captured`, an item's `exif.capturedAt`), and a stack's count.
export function describe(item) {
  const kind = item.kind === "video" ? "video" : item.kind === "animated" ? "animation" : item.motion ? "live photo" : "photo";
  const captured = item.captured || (item.exif && item.exif.capturedAt);
  const date = captured ? `, ${captured.slice(0, 10)}` : "";
  const stack = item.stack && item.stack.members ? `, stack of ${item.stack.members.length}` : "";
  return `${kind} ${item.path}${date}${stack}`;
}
// A place's label, as the manifest's summary counts it (`Place.label`).
export const placeLabel = (place) => place.cell ? `${place.latitude.toFixed(4)}, ${place.longitude.toFixed(4)}`
  : [place.name, place.region, place.country].filter((part) => part).join(", ");

// A placeholder as a data URL, made once per ThumbHash, painted under a cell or the lightbox's image.
const placeholderURLs = new Map();
function placeholderURL(item) {
  const key = item.placeholder && item.placeholder.thumbhash;
  if (!key) return null;
  if (!placeholderURLs.has(key)) {
    const bytes = Uint8Array.from(atob(key), (c) => c.charCodeAt(0));
    const { w, h, rgba } = thumbHashToRGBA(bytes);
    const canvas = document.createElement("canvas");
    canvas.width = w;
    canvas.height = h;
    canvas.getContext("2d").putImageData(new ImageData(rgba, w, h), 0, 0);
    placeholderURLs.set(key, canvas.toDataURL());
  }
  return placeholderURLs.get(key);
}
export function paintPlaceholder(element, item) {
  if (!item.placeholder) return;
  element.style.backgroundColor = item.placeholder.color;
  element.style.backgroundImage = `url("${placeholderURL(item)}")`;
  element.dataset.placeholder = "painted";
}
