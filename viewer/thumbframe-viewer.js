// thumbframe viewer: written by `thumbframe build --viewer`; reads manifest.json and its grid
// pages (or thumbframe-viewer-data.js, which the build writes for file:// use), paints a
// justified grid from the placeholders first, and opens a lightbox laid out with the manifest's
// frames from the full pages, fetched only when a photo opens.
"use strict";
// The viewer's arithmetic, apart from the page so that node can test it (viewer/test/).
const thumbframeViewerCore = (() => {
  // ThumbHash decoder, from Evan Wallace's published algorithm (as ThumbHash.decode in Swift).
  function thumbHashToRGBA(hash) {
    const { PI, min, max, cos, round } = Math;
    const header24 = hash[0] | (hash[1] << 8) | (hash[2] << 16);
    const header16 = hash[3] | (hash[4] << 8);
    const lDC = (header24 & 63) / 63, pDC = ((header24 >> 6) & 63) / 31.5 - 1, qDC = ((header24 >> 12) & 63) / 31.5 - 1;
    const lScale = ((header24 >> 18) & 31) / 31, hasAlpha = header24 >> 23;
    const pScale = ((header16 >> 3) & 63) / 63, qScale = ((header16 >> 9) & 63) / 63, isLandscape = header16 >> 15;
    const lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7);
    const ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7));
    const aDC = hasAlpha ? (hash[5] & 15) / 15 : 1, aScale = (hash[5] >> 4) / 15;
    const acStart = hasAlpha ? 6 : 5;
    let acIndex = 0;
    const channel = (nx, ny, scale) => {
      const ac = [];
      for (let cy = 0; cy < ny; cy++)
        for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++)
          ac.push((((hash[acStart + (acIndex >> 1)] >> ((acIndex++ & 1) << 2)) & 15) / 7.5 - 1) * scale);
      return ac;
    };
    const lAC = channel(lx, ly, lScale), pAC = channel(3, 3, pScale * 1.25), qAC = channel(3, 3, qScale * 1.25);
    const aAC = hasAlpha ? channel(5, 5, aScale) : null;
    const rx = isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7, ry = isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7);
    const ratio = rx / ry;
    const w = round(ratio > 1 ? 32 : 32 * ratio), h = round(ratio > 1 ? 32 / ratio : 32);
    const rgba = new Uint8ClampedArray(w * h * 4), fx = [], fy = [];
    for (let y = 0, i = 0; y < h; y++) {
      for (let x = 0; x < w; x++, i += 4) {
        let l = lDC, p = pDC, q = qDC, a = aDC;
        for (let c = 0, n = max(lx, hasAlpha ? 5 : 3); c < n; c++) fx[c] = cos((PI / w) * (x + 0.5) * c);
        for (let c = 0, n = max(ly, hasAlpha ? 5 : 3); c < n; c++) fy[c] = cos((PI / h) * (y + 0.5) * c);
        for (let cy = 0, j = 0; cy < ly; cy++)
          for (let cx = cy ? 0 : 1, fy2 = fy[cy] * 2; cx * ly < lx * (ly - cy); cx++, j++) l += lAC[j] * fx[cx] * fy2;
        for (let cy = 0, j = 0; cy < 3; cy++)
          for (let cx = cy ? 0 : 1, fy2 = fy[cy] * 2; cx < 3 - cy; cx++, j++) {
            const f = fx[cx] * fy2;
            p += pAC[j] * f;
            q += qAC[j] * f;
          }
        if (aAC)
          for (let cy = 0, j = 0; cy < 5; cy++)
            for (let cx = cy ? 0 : 1, fy2 = fy[cy] * 2; cx < 5 - cy; cx++, j++) a += aAC[j] * fx[cx] * fy2;
        const b = l - (2 / 3) * p, r = (3 * l - b + q) / 2, g = r - q;
        rgba[i] = max(0, 255 * min(1, r));
        rgba[i + 1] = max(0, 255 * min(1, g));
        rgba[i + 2] = max(0, 255 * min(1, b));
        rgba[i + 3] = max(0, 255 * min(1, a));
      }
    }
    return { w, h, rgba };
  }

  // The manifest's layout engine (LayoutEngine in Swift), for a window no viewport matches.
  function layoutFor(w, h, screenW, screenH, scale, preset) {
    const fitted = (k) => {
      const width = w * k, height = h * k;
      return {
        frame: { x: Math.max(0, (screenW - width) / 2), y: Math.max(0, (screenH - height) / 2), width, height },
        contentSize: { width, height }, fill: Math.max(screenW / width, screenH / height),
      };
    };
    if (preset === "photoswipe") {
      const fit = Math.min(1, screenW / w, screenH / h), secondary = Math.min(Math.min(1, 3 * fit), 4000 / w);
      const cw = w * fit, ch = h * fit;
      return {
        frame: { x: Math.round((screenW - cw) / 2), y: Math.round((screenH - ch) / 2), width: cw, height: ch },
        contentSize: { width: cw, height: ch }, maxOffset: { x: 0, y: 0 }, long: false,
        zoom: { min: fit, max: Math.max(fit, secondary, Math.max(1, 4 * fit)), doubleTap: secondary, native: 1 / scale },
      };
    }
    if (preset === "jx4") {
      const f = fitted(Math.min(screenW / w, screenH / h));
      return { frame: f.frame, contentSize: f.contentSize, maxOffset: { x: 0, y: 0 }, long: false,
        zoom: { min: 1, max: 3, doubleTap: f.fill, native: w / (f.frame.width * scale) } };
    }
    const long = screenW < screenH && h / w > screenH / screenW;
    const f = fitted(long ? screenW / w : Math.min(screenW / w, screenH / h));
    const native = w / (f.frame.width * scale);
    const maxZoom = preset === "pixel" ? Math.max(2, native) : 2;
    const doubleTap = preset === "pixel" ? Math.min(maxZoom, Math.max(2, f.fill)) : 2;
    return { frame: f.frame, contentSize: f.contentSize, long,
      maxOffset: { x: Math.max(0, f.frame.width - screenW), y: Math.max(0, f.frame.height - screenH) },
      zoom: { min: 1, max: maxZoom, doubleTap, native } };
  }
  return { thumbHashToRGBA, layoutFor };
})();
if (typeof module === "object" && module.exports) module.exports = thumbframeViewerCore;
else (function ({ thumbHashToRGBA, layoutFor }) {
  const $ = (id) => document.getElementById(id);


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
  function paintPlaceholder(element, item) {
    if (!item.placeholder) return;
    element.style.backgroundColor = item.placeholder.color;
    element.style.backgroundImage = `url("${placeholderURL(item)}")`;
    element.dataset.placeholder = "painted";
  }


  // `cells`: what the grid draws of each item (its grid page's cell); `items`: the full items,
  // fetched a page at a time when the lightbox needs them. Both by flat index.
  let manifest, settings, items = [], cells = [], base = new URL("./", location.href);
  const url = (path) => new URL(path, base).href;

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

  async function load() {
    const data = await dataScript();
    if (data) return { doc: data.manifest, page: async (path) => data.pages[path] };
    // index.html asked for manifest.json as it was parsed (a preload): this fetch takes that response.
    const response = await fetch(url("manifest.json"));
    if (!response.ok) throw new Error(`manifest.json: HTTP ${response.status}`);
    return { doc: await response.json(), page: async (path) => (await fetch(url(path))).json() };
  }

  // An original's URL (`--original-url` and the path below the source directory), or null.
  // A video's original as <video> would be asked for it: its MIME type and codec, for
  // canPlayType, which answers before a byte is fetched (Safari plays HEVC, Chromium and Firefox
  // mostly do not; Matroska, AVI and MPEG-TS play nowhere).
  const videoType = (video) => {
    const type = { mp4: "video/mp4", mov: "video/mp4", "3gp": "video/3gpp", webm: "video/webm", matroska: "video/x-matroska",
      avi: "video/x-msvideo", mpegts: "video/mp2t" }[video.container] || `video/${video.container}`;
    const codec = { h264: "avc1.42E01E", hevc: "hvc1.1.6.L93.B0", vp9: "vp09.00.10.08", av1: "av01.0.04M.08", vp8: "vp8",
      mpeg4: "mp4v.20.9" }[video.codec];
    return codec ? `${type}; codecs="${codec}"` : type;
  };
  const probe = document.createElement("video");
  const canPlay = (type) => probe.canPlayType(type) !== "";
  const mp4Type = (codecs) => `video/mp4; codecs="${codecs}"`;
  // The original's own type: its RFC 6381 codecs where the manifest has them.
  const ownType = (video) => video.codecs ? mp4Type(video.codecs) : videoType(video);
  const playsHere = (video) => video.playable || canPlay(ownType(video));
  // The files a video may play from, best first, as a <video>'s <source> list takes them: the
  // original where this browser plays it, then the rendition every browser plays (after it
  // when the original is only to be remuxed: the rendition is the same streams, index first).
  function videoSources(video, original) {
    const own = original && playsHere(video) ? { src: original, type: ownType(video) } : null;
    const made = video.rendition && canPlay(mp4Type(video.rendition.codecs))
      ? { src: url(video.rendition.path), type: mp4Type(video.rendition.codecs) } : null;
    return (video.delivery === "remux" ? [made, own] : [own, made]).filter(Boolean);
  }
  const originalURL = (path) => settings.originalURL ? settings.originalURL + path.split("/").map(encodeURIComponent).join("/") : null;
  // The display thumbnail: a video's is its poster.
  const displayThumbnail = (item) => item.thumbnails[settings.display] || Object.values(item.thumbnails)[0];

  // The file the lightbox loads, and the pixel size the manifest's layouts are for. A video's
  // image is its poster; the video itself plays from its original. An original no browser
  // decodes everywhere (HEIC, TIFF, RAW: not in settings.browserFormats) gives way to the
  // display thumbnail, the largest rendition.
  const showsOriginal = (item) => !!settings.originalURL && item.kind !== "video" &&
    (!settings.browserFormats || settings.browserFormats.includes(item.image.format));
  function loaded(item) {
    if (showsOriginal(item))
      return { src: originalURL(item.path), width: item.image.width, height: item.image.height,
        layoutSize: [item.image.width, item.image.height] };
    const thumbnail = displayThumbnail(item);
    const photoswipe = settings.preset === "photoswipe";
    return { src: url(thumbnail.path), width: thumbnail.width, height: thumbnail.height,
      layoutSize: photoswipe ? [thumbnail.width, thumbnail.height] : [item.image.width, item.image.height] };
  }

  // The zoom ladder: a photo shown from its thumbnails (not its original) has renditions,
  // smallest first, each sharp up to a zoom (relative to the fitted frame). For a window a
  // viewport matches they are the layout's `ladder` (scaled to this screen's pixel ratio),
  // else the same numbers from the thumbnails' widths.
  function rungsOf(item, L) {
    if (showsOriginal(item) || item.kind !== "photo") return null;
    const min = L.zoom.min || 1, scale = devicePixelRatio || 1;
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
    // On an HDR screen a photo's gain-map renditions are shown bright, and its SDR files — the
    // smaller srcset ones, the deep-zoom tiles — would dim it: there its rungs are the gain-map
    // renditions alone, the largest the last.
    const mapped = (r) => r.name !== "tiles" && (item.thumbnails[r.name] || {}).headroom;
    return hdrScreen() && found.some(mapped) ? found.filter(mapped) : found;
  }
  // The screen shows HDR (CSS `dynamic-range: high`): the one thing the viewer does otherwise
  // for gain-map renditions, which are plain images every browser shows right by itself.
  const hdrScreen = () => typeof matchMedia === "function" && matchMedia("(dynamic-range: high)").matches;
  // The rendition for the current zoom: the first sharp at it, else the largest. Zooming in
  // loads the next one beside the shown one and swaps when it has arrived (the image keeps its
  // place, so the point under the fingers stays); zooming out keeps the sharper one. Past the
  // largest rendition a photo with deep-zoom tiles draws them over it (`drawTiles`).
  let rungs = null, rung = null;
  function sharpen(item, first) {
    if (!rungs) return;
    const wanted = rungs.find((r) => r.native >= zoom - 1e-4) || rungs[rungs.length - 1];
    if (rung && rungs.indexOf(wanted) <= rungs.indexOf(rung)) return;
    if (wanted.name === "tiles") {
      // The largest rendition stays beneath as the backdrop the tiles arrive over.
      if (first) {
        const below = rungs[rungs.length - 2];
        image.src = url((below ? item.thumbnails[below.name] : displayThumbnail(item)).path);
      }
      rung = wanted;
      image.dataset.rendition = "tiles";
      drawTiles();
      return;
    }
    rung = wanted;
    const src = url(item.thumbnails[wanted.name].path), index = current;
    if (first) {
      image.src = src;
      image.dataset.rendition = wanted.name;
      return;
    }
    const next = new Image();
    next.onload = () => {
      if (current !== index || rung !== wanted) return;
      image.src = src;
      image.dataset.rendition = wanted.name;
    };
    next.src = src;
  }

  // ---- deep-zoom tiles ----------------------------------------------------------------------
  // A DeepZoom pyramid (thumbnails.tiles: the .dzi; tiles in <name>_files/<level>/<col>_<row>.<format>):
  // the smallest level whose pixels are at least as dense as the device's within TILE_STRETCH
  // (a level pixel may cover up to 1.25 device pixels, as a deep-zoom viewer lets a level
  // stretch before it fetches the next: the next level up has 4× the tiles, and upscaling by 1.25
  // is not seen on a 2× screen), only the tiles in view, laid over the image at its place and
  // size; redrawn as the view scrolls or zooms, once its position has settled.
  const TILE_STRETCH = 1.25;
  const tileLayer = document.createElement("div");
  tileLayer.id = "tf-tiles";
  let tileLevel = -1, tilesHeld = false;
  function drawTiles() {
    if (tilesHeld) return;  // a zoom step moves the view next: its tiles are those after it
    const entry = shownItem && shownItem.thumbnails.tiles;
    // Fitted, the renditions suffice (and a pull to dismiss moves the image alone).
    const sane = entry && entry.tiles && entry.tiles.tileSize >= 16 && entry.tiles.levels >= 1 && entry.tiles.levels <= 64;
    if (!sane || !rung || rung.name !== "tiles" || image.hidden || zoom <= 1) {
      if (tileLayer.isConnected) tileLayer.replaceChildren();
      tileLevel = -1;
      tileLayer.remove();
      return;
    }
    if (!tileLayer.isConnected) content.append(tileLayer);
    const t = entry.tiles, top = t.levels - 1;
    const left = parseFloat(image.style.left), topPx = parseFloat(image.style.top), shown = parseFloat(image.style.width);
    const device = shown * (devicePixelRatio || 1);
    // The smallest level at least as wide as the picture's device pixels over TILE_STRETCH (the
    // full size past it).
    let level = top;
    while (level > 0 && Math.ceil(entry.width / 2 ** (top - level + 1)) * TILE_STRETCH >= device - 0.5) level--;
    const width = Math.ceil(entry.width / 2 ** (top - level)), height = Math.ceil(entry.height / 2 ** (top - level));
    const scale = shown / width, size = t.tileSize, overlap = t.overlap;
    if (level !== tileLevel) {
      tileLayer.replaceChildren();
      tileLevel = level;
    }
    tileLayer.dataset.level = level;
    const base = url(entry.path.replace(/\.dzi$/, "_files/") + level + "/");
    // The view, in level pixels.
    const x0 = (scroller.scrollLeft - left) / scale, y0 = (scroller.scrollTop - topPx) / scale;
    const x1 = x0 + innerWidth / scale, y1 = y0 + innerHeight / scale;
    const columns = Math.ceil(width / size), rows = Math.ceil(height / size);
    // (At most the tiles a window can show: a hostile size cannot make this loop long.)
    const c0 = Math.max(0, Math.floor(x0 / size)), c1 = Math.min(columns - 1, Math.floor(x1 / size), c0 + 64);
    const r0 = Math.max(0, Math.floor(y0 / size)), r1 = Math.min(rows - 1, Math.floor(y1 / size), r0 + 64);
    const wanted = new Set();
    for (let c = c0; c <= c1; c++) {
      for (let r = r0; r <= r1; r++) {
        const name = `${c}_${r}`;
        wanted.add(name);
        let tile = tileLayer.querySelector(`[data-tile="${name}"]`);
        if (!tile) {
          tile = document.createElement("img");
          tile.className = "tf-tile";
          tile.alt = "";
          tile.dataset.tile = name;
          tile.src = base + `${name}.${t.format}`;
          tileLayer.append(tile);
        }
        // A tile repeats `overlap` pixels of each neighbour on its inner sides.
        const tx = c * size - (c > 0 ? overlap : 0), ty = r * size - (r > 0 ? overlap : 0);
        const tw = Math.min(width, (c + 1) * size + overlap) - tx, th = Math.min(height, (r + 1) * size + overlap) - ty;
        Object.assign(tile.style, { left: `${left + tx * scale}px`, top: `${topPx + ty * scale}px`,
          width: `${tw * scale}px`, height: `${th * scale}px` });
      }
    }
    for (const tile of [...tileLayer.children]) if (!wanted.has(tile.dataset.tile)) tile.remove();
  }

  function layout(item) {
    const viewport = settings.viewports.find((v) => v.width === innerWidth && v.height === innerHeight);
    if (viewport && item.layouts[viewport.name]) return { ...item.layouts[viewport.name], viewport: viewport.name };
    const [w, h] = loaded(item).layoutSize;
    const fitted = layoutFor(w, h, innerWidth, innerHeight, devicePixelRatio || 1, settings.preset);
    // A video does not zoom, as in the manifest's own layouts: its range is the fit.
    if (item.kind === "video") fitted.zoom = { ...fitted.zoom, max: fitted.zoom.min, doubleTap: fitted.zoom.min };
    return { ...fitted, viewport: null };
  }

  // ---- kinds: videos, animated images, Live and Motion Photos ---------------------------------
  // A Live Photo's MOV is served like an original; a Motion Photo's MP4 lies beside the thumbnails.
  function motionURL(item) {
    const motion = item.motion;
    if (!motion) return null;
    const own = motion.path ? url(motion.path) : motion.original ? originalURL(motion.original) : null;
    const sources = videoSources(motion.video, own);
    return sources.length ? sources[0].src : own;
  }
  const clock = (seconds) => {
    const s = Math.max(0, Math.round(seconds));
    return s >= 3600 ? `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`
      : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  // What a grid cell says of its kind: a video's length, LIVE, GIF or WEBP; RAW for a JPEG shown
  // in place of the RAW shot with it.
  function badge(cell) {
    if (cell.kind === "video" && cell.duration !== undefined) return clock(cell.duration);
    if (cell.kind === "animated") return cell.format.toUpperCase();
    if (cell.motion) return "LIVE";
    if (cell.raw) return "RAW";
    return null;
  }
  // Plays a photo's motion over `host` (muted, inline) while the pointer is on it or it is pressed.
  function playMotion(host, item, once) {
    const src = motionURL(item);
    if (!src || host.querySelector(".tf-motion")) return;
    const video = document.createElement("video");
    Object.assign(video, { className: "tf-motion", muted: true, playsInline: true, autoplay: true, loop: !once, src });
    if (once) video.addEventListener("ended", () => video.remove());
    host.append(video);
    video.play().catch(() => {});
  }
  function stopMotion(host) {
    for (const video of host.querySelectorAll(".tf-motion")) { video.pause(); video.remove(); }
  }

  // ---- grid: justified rows per section, placeholders first -------------------------------
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const cell = entry.target, item = cells[+cell.dataset.index];
      observer.unobserve(cell);
      paintPlaceholder(cell, item);
      const img = cell.querySelector("img");
      const family = (settings.srcset || []).filter((name) => item.thumbnails[name]);
      // The smallest rendition whose pixels cover the cell's device pixels within TILE_STRETCH
      // (as a deep-zoom level: a 16:9 cell of a phone's row takes the 512-px `small` stretched
      // by 1.15, not the 1 280-px preview, five times its bytes): `sizes` is the cell's width
      // over it.
      // (An image starts loading as its srcset is set: all three at once, when its turn comes.)
      const start = () => {
        if (family.length) {
          img.srcset = family.map((name) => `${url(item.thumbnails[name].path)} ${item.thumbnails[name].width}w`).join(", ");
          img.sizes = `${Math.ceil(parseFloat(cell.style.width) / TILE_STRETCH)}px`;
        }
        img.src = url((item.thumbnails[family[0]] || item.thumbnails[settings.display] || Object.values(item.thumbnails)[0]).path);
      };
      const box = entry.boundingClientRect;
      loadCellImage(img, start, box.top < innerHeight && box.bottom > 0 && box.right > 0 && box.left < innerWidth);
    }
  }, { rootMargin: "400px" });
  // The screen's images first: a cell in the margin below it waits until every cell on screen
  // has its image (or none has come for 3 s: a stalled one), so they do not share the network
  // with them.
  let onScreen = 0, marginTimer = 0;
  const margin = [];
  function flushMargin() {
    clearTimeout(marginTimer);
    while (margin.length) margin.shift()();
  }
  function loadCellImage(img, start, shown) {
    if (!shown) {
      if (!onScreen) start();
      else margin.push(start);
      return;
    }
    onScreen++;
    const settled = () => {
      if (--onScreen === 0) return flushMargin();
      clearTimeout(marginTimer);
      marginTimer = setTimeout(flushMargin, 3000);
    };
    img.addEventListener("load", settled, { once: true });
    img.addEventListener("error", settled, { once: true });
    img.fetchPriority = "high";
    start();
    clearTimeout(marginTimer);
    marginTimer = setTimeout(flushMargin, 3000);
  }

  // Each section is a title and one block per manifest page, sized by an estimate until the
  // page comes near the screen; then its grid page (the cells: path, shape, placeholder,
  // thumbnails) is fetched and laid out in justified rows (rows break at page boundaries). A
  // library of a million photos loads what is looked at, and the full pages of what is opened.
  const rowTarget = () => (innerWidth < 600 ? 110 : 200);
  const gridWidth = () => $("tf-grid").clientWidth - 8;
  let source = null;
  const loadedFiles = new Map();  // page or grid page path -> Promise of its entries

  // A page file's entries, read once: each given its flat index and kept in `into`.
  function loadEntries(path, section, into) {
    if (!loadedFiles.has(path)) {
      loadedFiles.set(path, source.page(path).then((file) => {
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
  const loadCells = (section, page) => loadEntries(page.grid, section, cells);
  const loadPage = (section, page) => loadEntries(page.path, section, items);

  const pageObserver = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      pageObserver.unobserve(entry.target);
      const { section, page } = entry.target.tfPage;
      loadCells(section, page).then((pageCells) => renderPage(entry.target, pageCells));
    }
  }, { rootMargin: "1200px 0px" });

  function renderSections() {
    const perRow = Math.max(1, gridWidth() / (rowTarget() * 1.3));
    for (const section of manifest.sections) {
      const element = document.createElement("section");
      element.className = "tf-section";
      // The library's own name is the page's heading already: its section is not named twice.
      if (section.title !== $("tf-title").textContent) {
        const title = document.createElement("h2");
        title.textContent = section.title;
        element.append(title);
      }
      for (const page of section.pages) {
        const block = document.createElement("div");
        block.className = "tf-page";
        block.tfPage = { section, page };
        block.style.minHeight = `${Math.ceil(page.count / perRow) * (rowTarget() + 4)}px`;
        element.append(block);
        pageObserver.observe(block);
      }
      $("tf-grid").append(element);
    }
  }

  function renderPage(block, pageCells) {
    block.tfCells = pageCells;
    const width = gridWidth(), gap = 4, target = rowTarget();
    let row = [];
    const flush = (last) => {
      if (!row.length) return;
      const aspects = row.map((item) => item.width / item.height);
      const sum = aspects.reduce((a, b) => a + b, 0);
      const height = last ? Math.min(target, (width - gap * (row.length - 1)) / sum) : (width - gap * (row.length - 1)) / sum;
      const rowElement = document.createElement("div");
      rowElement.className = "tf-row";
      row.forEach((item, k) => {
        const cell = document.createElement("button");
        cell.className = "tf-cell";
        cell.type = "button";
        cell.dataset.index = item.flat;
        cell.style.width = `${(aspects[k] * height).toFixed(2)}px`;
        cell.style.height = `${height.toFixed(2)}px`;
        cell.setAttribute("aria-label", describe(item));
        cell.dataset.path = item.path;
        const img = document.createElement("img");
        img.alt = "";
        img.decoding = "async";
        img.addEventListener("load", () => img.classList.add("tf-loaded"));
        cell.append(img);
        if (item.stack) {
          const count = document.createElement("span");
          count.className = "tf-stack";
          count.textContent = `${item.stack.members.length}`;
          cell.append(count);
          cell.dataset.stack = item.stack.members.length;
        }
        const mark = badge(item);
        if (mark) {
          const label = document.createElement("span");
          label.className = "tf-badge";
          label.textContent = mark;
          cell.append(label);
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
        rowElement.append(cell);
        observer.observe(cell);
      });
      block.append(rowElement);
      row = [];
    };
    let aspectSum = 0;
    for (const item of pageCells) {
      // A stack is one cell, its cover's: the other members are in the strip it opens.
      if (item.stack && item.stack.cover !== item.item) continue;
      row.push(item);
      aspectSum += item.width / item.height;
      if (aspectSum * target + gap * (row.length - 1) >= width) {
        flush(false);
        aspectSum = 0;
      }
    }
    flush(true);
    block.style.minHeight = "";
    block.dataset.rendered = "true";
  }

  // The item at a flat index, fetching its page when it has not been seen yet.
  async function itemAt(index) {
    if (items[index]) return items[index];
    const section = sectionOf(index);
    const offset = index - section.start;
    await loadPage(section, section.pages.find((p) => offset >= p.start && offset < p.start + p.count));
    return items[index];
  }

  // ---- lightbox ----------------------------------------------------------------------------
  const box = $("tf-lightbox"), scroller = $("tf-scroll"), content = $("tf-content"), image = $("tf-image");
  const player = $("tf-video"), live = $("tf-live"), rawLink = $("tf-raw"), note = $("tf-note");

  // A video this browser cannot play is its poster and a sentence saying so, with its original
  // to download: never a greyed player stuck at 0:00.
  function cannotPlay(item, source) {
    player.pause();
    player.removeAttribute("src");
    player.replaceChildren();
    player.hidden = true;
    image.hidden = false;
    const v = item.video;
    note.textContent = `This video (${v.codec.toUpperCase()} in ${v.container.toUpperCase()}) does not play in this browser.`;
    if (source) {
      const link = document.createElement("a");
      Object.assign(link, { href: source, textContent: "Download it", download: "" });
      note.append(" ", link);
    }
    note.hidden = false;
  }
  // Every source failed (a <source>'s error does not bubble: caught on the way down): the last
  // one's is the end of the list.
  player.addEventListener("error", (event) => {
    const last = player.lastElementChild;
    if (shownItem && shownItem.kind === "video" && last && event.target === last) cannotPlay(shownItem, last.getAttribute("src"));
  }, true);
  // Scrub previews: while the video seeks (its slider dragged, an arrow key), the tile of its
  // sprite sheet for that time (video.scrub) over the lower part of the frame; gone a moment
  // after the seek ends.
  const scrub = $("tf-scrub");
  let scrubTimer = 0;
  function showScrub() {
    const sheet = shownItem && shownItem.video && shownItem.video.scrub;
    if (!sheet || player.hidden) return;
    const tile = Math.min(sheet.count - 1, Math.max(0, Math.floor(player.currentTime / sheet.interval)));
    const left = parseFloat(player.style.left), top = parseFloat(player.style.top);
    Object.assign(scrub.style, {
      width: `${sheet.tileWidth}px`, height: `${sheet.tileHeight}px`, backgroundImage: `url("${url(sheet.sprite)}")`,
      backgroundPosition: `${-(tile % sheet.columns) * sheet.tileWidth}px ${-Math.floor(tile / sheet.columns) * sheet.tileHeight}px`,
      left: `${left + (parseFloat(player.style.width) - sheet.tileWidth) / 2}px`,
      top: `${top + Math.max(0, parseFloat(player.style.height) - sheet.tileHeight - 64)}px` });
    scrub.dataset.tile = tile;
    scrub.hidden = false;
    clearTimeout(scrubTimer);
  }
  function hideScrub(delay) {
    clearTimeout(scrubTimer);
    scrubTimer = setTimeout(() => { scrub.hidden = true; }, delay);
  }
  player.addEventListener("seeking", showScrub);
  player.addEventListener("seeked", () => hideScrub(700));
  let current = -1, zoom = 1, frame = null, currentLayout = null, shownItem = null;

  function sectionOf(index) {
    let lo = 0, hi = manifest.sections.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (manifest.sections[mid].start <= index) lo = mid; else hi = mid - 1;
    }
    return manifest.sections[lo];
  }

  function place() {
    const L = currentLayout;
    const w = L.frame.width * zoom, h = L.frame.height * zoom;
    const cw = Math.max(innerWidth, L.contentSize.width * zoom), ch = Math.max(L.long ? L.contentSize.height * zoom : innerHeight, h);
    content.style.width = `${zoom === 1 ? Math.max(innerWidth, L.contentSize.width) : cw}px`;
    content.style.height = `${zoom === 1 ? Math.max(innerHeight, L.contentSize.height) : ch}px`;
    const x = zoom === 1 ? L.frame.x : Math.max(0, (cw - w) / 2), y = zoom === 1 ? L.frame.y : Math.max(0, (ch - h) / 2);
    Object.assign(image.style, { left: `${x}px`, top: `${y}px`, width: `${w}px`, height: `${h}px` });
    Object.assign(player.style, { left: `${x}px`, top: `${y}px`, width: `${w}px`, height: `${h}px` });
    image.dataset.zoom = `${zoom}`;
    if (shownItem && zoom > 1) sharpen(shownItem, false);
    scroller.style.overflowX = zoom === 1 ? "hidden" : "auto";
    // Fitted and not long: every touch is the viewer's (pull down to dismiss, swipe, pinch), or
    // the browser would take a vertical drag as a scroll and cancel it. Zoomed or long: the
    // browser pans natively; pinch stays the viewer's.
    scroller.style.touchAction = zoom === 1 && !L.long ? "none" : "pan-x pan-y";
  }

  async function show(index) {
    const count = manifest.itemCount;
    const wanted = ((index % count) + count) % count;
    const item = await itemAt(wanted);
    current = wanted;
    currentLayout = layout(item);
    zoom = 1;
    image.removeAttribute("src");
    image.style.backgroundImage = "";
    paintPlaceholder(image, item);
    image.dataset.viewport = currentLayout.viewport || "";
    image.dataset.index = current;
    image.alt = describe(item);
    place();
    scroller.scrollTop = 0;  // long images start at the top
    scroller.scrollLeft = 0;
    shownItem = item;
    rungs = rungsOf(item, currentLayout);
    rung = null;
    delete image.dataset.rendition;
    drawTiles();
    if (rungs) sharpen(item, true);
    else image.src = loaded(item).src;
    // A video plays in a native <video> at the manifest's frame, its poster first; without
    // --original-url there is no video to play, and the poster stays.
    stopMotion(content);
    player.pause();
    hideScrub(0);
    const original = item.kind === "video" ? originalURL(item.path) : null;
    const rendition = item.video && item.video.rendition ? url(item.video.rendition.path) : null;
    const sources = item.video ? videoSources(item.video, original) : [];
    const video = original || rendition;
    note.hidden = true;
    note.textContent = "";
    player.hidden = !video;
    image.hidden = !!video;
    player.removeAttribute("src");
    player.replaceChildren();
    if (video && !sources.length) cannotPlay(item, original || rendition);
    else if (video) {
      player.poster = url(displayThumbnail(item).path);
      player.replaceChildren(...sources.map((source) => Object.assign(document.createElement("source"), source)));
      player.dataset.index = current;
      player.load();
    }
    // A video's own controls are along its bottom: its caption bar goes to the top.
    box.dataset.kind = item.kind;
    live.hidden = !motionURL(item);
    // A RAW + JPEG pair: the RAW is offered as the original to download, where originals are served.
    const raw = item.rawFile ? originalURL(item.rawFile.original) : null;
    rawLink.hidden = !raw;
    if (raw) rawLink.href = raw;
    else rawLink.removeAttribute("href");
    const section = sectionOf(current);
    const kind = item.kind === "video" && item.video ? ` · ${clock(item.video.duration)}${video ? "" : " (video not published)"}`
      : item.rawFile ? ` · RAW + ${item.image.format.toUpperCase()}` : "";
    const stacked = item.stack ? ` · ${stackWords[item.stack.reason] || "a stack"}` : "";
    const where = item.place ? ` · ${placeLabel(item.place)}` : "";
    const position = `${current - section.start + 1} / ${section.count}`;
    $("tf-caption").textContent = `${section.title} · ${position} · ${item.path}${kind}${where}${stacked}`;
    // What a screen reader says as the photo changes (the dialog keeps its focus on Close).
    $("tf-announce").textContent = `${describe(item)}, ${current - section.start + 1} of ${section.count} in ${section.title}`;
    showStrip(item);
    resetDrag();
    if (location.hash !== linkOf(item)) {
      if (historyEntry) history.replaceState({ thumbframe: true }, "", linkOf(item));
      else history.pushState({ thumbframe: true }, "", linkOf(item));
      historyEntry = true;
    }
  }
  addEventListener("popstate", () => {
    if (leaving) {
      leaving = false;
      return;
    }
    if (!box.hidden && !location.hash) {
      historyEntry = false;
      close(true);
    } else if (location.hash) openLink(false);
  });
  // The item a `#path` names: its directory's section first (sections by directory), then the rest.
  // `atLoad`: the page was opened at this address; its entry becomes the grid's, and the photo
  // gets its own above it, so Back (or ✕) returns to the grid, never away from the page. A hash
  // that is no path (malformed escapes, another page's anchor) opens nothing.
  async function openLink(atLoad) {
    let path;
    try {
      path = location.hash.slice(1).split("/").map(decodeURIComponent).join("/");
    } catch {
      return;
    }
    if (!path || (!box.hidden && items[current] && items[current].path === path)) return;
    const directory = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
    const sections = [...manifest.sections].sort((a, b) => (b.name === directory) - (a.name === directory));
    for (const section of sections)
      for (const page of section.pages) {
        const found = (await loadCells(section, page)).find((item) => item.path === path);
        if (found) {
          if (atLoad) history.replaceState(null, "", location.pathname + location.search);
          historyEntry = !atLoad;
          return open(found.flat);
        }
      }
  }
  // A stack's reason (`Stack.Reason`) in a person's words.
  const stackWords = { burst: "one burst of a stack", "time+similar": "a stack taken seconds apart, alike",
    duplicate: "a stack of copies of one picture" };
  // What a cell or the lightbox's image says to a screen reader: the file, its kind and date
  // (a cell's `captured`, an item's `exif.capturedAt`), and a stack's count.
  function describe(item) {
    const kind = item.kind === "video" ? "video" : item.kind === "animated" ? "animation" : item.motion ? "live photo" : "photo";
    const captured = item.captured || (item.exif && item.exif.capturedAt);
    const date = captured ? `, ${captured.slice(0, 10)}` : "";
    const stack = item.stack && item.stack.members ? `, stack of ${item.stack.members.length}` : "";
    return `${kind} ${item.path}${date}${stack}`;
  }

  // With --locations, a list of the places photos were taken (no map tiles: no third-party
  // server learns what is looked at), most photos first; a place opens its first photo, found in
  // the grid pages in order. A place's label is the manifest's (`Place.label`).
  const placeLabel = (place) => place.cell ? `${place.latitude.toFixed(4)}, ${place.longitude.toFixed(4)}`
    : [place.name, place.region, place.country].filter((part) => part).join(", ");
  function renderPlaces() {
    const counts = manifest.summary && manifest.summary.places;
    if (!counts) return;
    const list = $("tf-places").querySelector("ul");
    const sorted = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 200);
    for (const [label, count] of sorted) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = `${label} (${count})`;
      button.addEventListener("click", () => openPlace(label));
      const entry = document.createElement("li");
      entry.append(button);
      list.append(entry);
    }
    $("tf-places").hidden = false;
  }
  async function openPlace(label) {
    for (const section of manifest.sections)
      for (const page of section.pages) {
        const found = (await loadCells(section, page)).find((cell) => cell.place && placeLabel(cell.place) === label);
        if (found) return open(found.flat);
      }
  }

  // Paging (arrows, swipes, keys) goes through what the grid shows: an item in no stack, or a
  // stack's cover; a stack's other members are reached from its strip.
  async function page(direction) {
    const count = manifest.itemCount;
    let index = current;
    for (let step = 0; step < count; step++) {
      index = (((index + direction) % count) + count) % count;
      const item = await itemAt(index);
      if (!item.stack || item.stack.cover === item.item) return show(index);
    }
  }

  // A photo of a stack shows the stack as a strip of its members' thumbnails under it: a tap
  // shows that member. The cover's entry lists them; a member's names its cover.
  const strip = $("tf-strip");
  async function showStrip(item) {
    strip.replaceChildren();
    strip.hidden = !item.stack;
    if (!item.stack) return;
    const section = sectionOf(current);
    const cover = item.stack.members ? item : await itemAt(section.start + item.stack.cover);
    if (current !== section.start + item.item || !cover.stack || !cover.stack.members) return;
    for (const position of cover.stack.members) {
      const member = await itemAt(section.start + position);
      if (current !== section.start + item.item) return;  // the lightbox moved on meanwhile
      const button = document.createElement("button");
      button.type = "button";
      button.setAttribute("aria-label", describe(member));
      if (position === item.item) button.setAttribute("aria-current", "true");
      const small = member.thumbnails[settings.thumbnails[0].name] || displayThumbnail(member);
      button.style.backgroundImage = `url("${url(small.path)}")`;
      button.addEventListener("click", () => show(section.start + position));
      strip.append(button);
    }
  }
  // Keyboard focus stays in the open lightbox: Tab and Shift+Tab cycle through its controls.
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const controls = [...box.querySelectorAll("button, a[href], video[controls]")].filter((e) => !e.hidden && e.offsetParent);
    if (!controls.length) return;
    const at = controls.indexOf(document.activeElement);
    const next = controls[(at + (event.shiftKey ? -1 : 1) + controls.length) % controls.length];
    next.focus();
    event.preventDefault();
  });

  // Deep links: an open photo is `#<its path>` in the address bar, one history entry however
  // far it pages, so Back closes the lightbox; loading such an address opens it.
  const linkOf = (item) => "#" + item.path.split("/").map(encodeURIComponent).join("/");
  let historyEntry = false;
  // Leaving a photo's entry must not scroll the grid back to where it was when the entry was made.
  history.scrollRestoration = "manual";
  // While the lightbox is open the page under it is out of reach: no focus, nothing read out.
  function coverPage(covered) {
    for (const element of [document.querySelector("body > header"), $("tf-grid")]) {
      if (!element) continue;
      element.inert = covered;
      if (covered) element.setAttribute("aria-hidden", "true");
      else element.removeAttribute("aria-hidden");
    }
  }
  async function open(index) {
    box.hidden = false;
    coverPage(true);
    document.body.style.overflow = "hidden";
    await show(index);
    $("tf-close").focus();
  }

  // Closes the lightbox at once; its history entry is left too (`fromHistory`: Back already did).
  let leaving = false;
  function close(fromHistory) {
    if (box.hidden) return;
    if (historyEntry && fromHistory !== true) {
      leaving = true;  // the popstate this causes is ours
      history.back();
    }
    historyEntry = false;
    player.pause();
    player.removeAttribute("src");
    player.replaceChildren();
    player.load();  // stops fetching what it played
    stopMotion(content);
    box.hidden = true;
    coverPage(false);
    $("tf-announce").textContent = "";
    document.body.style.overflow = "";
    const cell = document.querySelector(`.tf-cell[data-index="${current}"]`);
    if (cell) cell.focus();
  }

  // Zoom: jx presets count from 1 (the fitted frame); PhotoSwipe in image pixels per CSS pixel,
  // where the fitted frame is `min`.
  function relative(value) { return value / (currentLayout.zoom.min || 1); }
  function toggleZoom(clientX, clientY) {
    if (!player.hidden) return;  // a video is shown at its frame, never zoomed
    const target = zoom === 1 ? Math.min(relative(currentLayout.zoom.doubleTap), relative(currentLayout.zoom.max)) : 1;
    if (target <= 1 && zoom === 1) return;
    zoomTo(target, clientX, clientY);
  }
  // Zooms to `target` (relative to the fitted frame, within the preset's limits) keeping the
  // image point under (clientX, clientY) where it is.
  function zoomTo(target, clientX, clientY) {
    const rect = image.getBoundingClientRect();
    const fx = (clientX - rect.left) / rect.width, fy = (clientY - rect.top) / rect.height;
    zoom = Math.min(Math.max(target, 1), Math.max(1, relative(currentLayout.zoom.max)));
    tilesHeld = true;  // the tiles of the view before the scroll below would be fetched for nothing
    place();
    const after = image.getBoundingClientRect();
    scroller.scrollLeft += after.left + fx * after.width - clientX;
    scroller.scrollTop += after.top + fy * after.height - clientY;
    tilesHeld = false;
    if (rung && rung.name === "tiles") drawTiles();
  }
  image.dataset.zoom = "1";
  // Tiles follow the view as it scrolls, once a frame.
  let tilesQueued = false;
  scroller.addEventListener("scroll", () => {
    if (!tileLayer.isConnected || tilesQueued) return;
    tilesQueued = true;
    requestAnimationFrame(() => {
      tilesQueued = false;
      drawTiles();
    });
  });

  // Pointer: double tap zooms, horizontal swipe pages, pulling down dismisses (scale and fade
  // by the preset's rule).
  // Pinch (two pointers) and ctrl+wheel (a trackpad's pinch) zoom between the fitted frame and
  // the preset's maximum.
  const pointers = new Map();
  let pinch = null;
  scroller.addEventListener("wheel", (event) => {
    if (!event.ctrlKey || box.hidden) return;
    event.preventDefault();
    zoomTo(zoom * Math.exp(-event.deltaY / 200), event.clientX, event.clientY);
  }, { passive: false });
  function pinchDistance() {
    const [a, b] = [...pointers.values()];
    return { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  }
  scroller.addEventListener("pointerdown", (event) => {
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 2) {
      resetDrag();
      pinch = { start: pinchDistance().d, zoom };
    }
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

  let drag = null, tap = null, lastTap = null;
  function resetDrag() {
    drag = null;
    image.style.transform = "";
    $("tf-mask").style.opacity = "1";
  }
  // A tap is a press that barely moves, zoomed or not; two within 300 ms and 30 px toggle the zoom.
  scroller.addEventListener("pointerdown", (event) => {
    tap = pointers.size === 1 ? { x: event.clientX, y: event.clientY } : null;
    if (zoom !== 1 || pointers.size > 1) return;
    drag = { x: event.clientX, y: event.clientY, dx: 0, dy: 0, vy: 0, t: event.timeStamp, top: scroller.scrollTop };
  });
  scroller.addEventListener("pointermove", (event) => {
    if (tap && Math.hypot(event.clientX - tap.x, event.clientY - tap.y) >= 8) tap = null;
  });
  // The browser took the gesture (a native pan, a system gesture): nothing stays shrunk or dimmed.
  scroller.addEventListener("pointercancel", () => {
    tap = null;
    resetDrag();
  });
  scroller.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    drag.vy = dy - drag.dy;
    drag.dx = dx;
    drag.dy = dy;
    if (dy > 0 && Math.abs(dy) > Math.abs(dx) && drag.top === 0) {
      const rule = settings.frontend.dismiss;
      const scale = rule ? Math.min(1, Math.max(rule.minScale, 1 - dy / innerHeight)) : 1;
      const alpha = rule ? Math.pow(scale, rule.maskAlphaExponent) : Math.max(0, 1 - dy / innerHeight);
      image.style.transform = `translate(${dx}px, ${dy}px) scale(${scale})`;
      $("tf-mask").style.opacity = `${alpha}`;
    }
  });
  scroller.addEventListener("pointerup", (event) => {
    const d = drag, t = tap;
    resetDrag();
    tap = null;
    if (d && d.dy > 40 && d.vy >= 0 && Math.abs(d.dy) > Math.abs(d.dx) && d.top === 0) return close();
    if (d && Math.abs(d.dx) > 50 && Math.abs(d.dx) > Math.abs(d.dy)) return page(d.dx < 0 ? 1 : -1);
    if (!t) return;
    if (lastTap && event.timeStamp - lastTap.time < 300 && Math.hypot(event.clientX - lastTap.x, event.clientY - lastTap.y) < 30) {
      lastTap = null;
      toggleZoom(event.clientX, event.clientY);
    } else lastTap = { time: event.timeStamp, x: event.clientX, y: event.clientY };
  });
  scroller.addEventListener("dblclick", (event) => event.preventDefault());
  $("tf-prev").addEventListener("click", () => page(-1));
  $("tf-next").addEventListener("click", () => page(1));
  $("tf-close").addEventListener("click", close);
  // A Live or Motion Photo: the motion plays over the photo while the mouse is on it, or once
  // from the LIVE button (a press on a phone).
  image.addEventListener("pointerenter", (event) => {
    if (event.pointerType === "mouse" && items[current]) playMotion(content, items[current], false);
  });
  image.addEventListener("pointerleave", () => stopMotion(content));
  live.addEventListener("click", () => { stopMotion(content); playMotion(content, items[current], true); placeMotion(); });
  document.addEventListener("keydown", (event) => {
    if (box.hidden) return;
    // Zoomed in, the arrows move about the photo (as PhotoSwipe's do); fitted, they page.
    if (zoom > 1 && (event.key === "ArrowRight" || event.key === "ArrowLeft"))
      scroller.scrollBy({ left: (event.key === "ArrowRight" ? 1 : -1) * Math.max(40, innerWidth * 0.1), behavior: "instant" });
    else if (event.key === "ArrowRight") page(1);
    else if (event.key === "ArrowLeft") page(-1);
    else if (event.key === "Escape") close();
    else if (event.key === "+" || event.key === "=") stepZoom(true);
    else if (event.key === "-") stepZoom(false);
    else if (scrollKeys[event.key]) scroller.scrollBy({ top: scrollKeys[event.key](), behavior: "instant" });
    else return;
    event.preventDefault();
  });
  // The keyboard scrolls a long (or zoomed) image as it would a page.
  const scrollKeys = {
    ArrowDown: () => 40, ArrowUp: () => -40, PageDown: () => innerHeight * 0.9, PageUp: () => -innerHeight * 0.9,
    " ": () => innerHeight * 0.9, Home: () => -scroller.scrollHeight, End: () => scroller.scrollHeight,
  };
  // `+` zooms in a step (first to the preset's double-tap zoom, then by half again, up to its
  // maximum), `-` out a step down to the fitted frame; at the fitted frame `-` does nothing.
  function stepZoom(into) {
    if (!player.hidden) return;
    const target = into ? (zoom === 1 ? Math.max(1.5, relative(currentLayout.zoom.doubleTap)) : zoom * 1.5) : zoom / 1.5;
    if (!into && zoom === 1) return;
    zoomTo(target < 1.05 ? 1 : target, innerWidth / 2, innerHeight / 2);
  }
  // A rotated phone or a resized window: the rows are laid out again for the new width (the
  // pages not yet rendered get new estimates), and an open lightbox takes the new frame.
  let laidOutWidth = 0;
  addEventListener("resize", () => {
    if (!box.hidden) show(current);
    if (!manifest || gridWidth() === laidOutWidth) return;
    laidOutWidth = gridWidth();
    const perRow = Math.max(1, laidOutWidth / (rowTarget() * 1.3));
    for (const block of document.querySelectorAll(".tf-page")) {
      if (!block.tfCells) {
        block.style.minHeight = `${Math.ceil(block.tfPage.page.count / perRow) * (rowTarget() + 4)}px`;
        continue;
      }
      for (const cell of block.querySelectorAll(".tf-cell")) observer.unobserve(cell);
      block.replaceChildren();
      renderPage(block, block.tfCells);
    }
  });

  // ---- start -------------------------------------------------------------------------------
  (async () => {
    try {
      source = await load();
      manifest = source.doc;
      settings = manifest.settings;
      // The library's name: its root folder's section title (the source directory's name).
      const root = manifest.sections.find((section) => section.name === ".");
      const name = root ? root.title : manifest.sections.length === 1 ? manifest.sections[0].title : "Photos";
      $("tf-title").textContent = name;
      document.title = `${name} · ${manifest.itemCount} ${manifest.itemCount === 1 ? "item" : "items"}`;
      renderSections();
      renderPlaces();
      laidOutWidth = gridWidth();
      document.body.dataset.ready = "true";
      if (location.hash) openLink(true);
    } catch (error) {
      const message = document.createElement("p");
      message.id = "tf-error";
      message.textContent = `Cannot read the manifest (${error.message}). From file://, rebuild with --viewer; or serve this folder (python3 -m http.server).`;
      $("tf-grid").append(message);
      document.body.dataset.ready = "error";
    }
  })();
  // The motion video takes the image's place and size.
  function placeMotion() {
    for (const video of content.querySelectorAll(".tf-motion"))
      Object.assign(video.style, { left: image.style.left, top: image.style.top, width: image.style.width, height: image.style.height });
  }
  new MutationObserver(placeMotion).observe(content, { childList: true });
  window.thumbframeViewer = { open, show, close, items: () => items, cells: () => cells, itemAt, zoomTo, zoom: () => zoom, layout: (i) => layout(items[i]),
    thumbHashToRGBA: (base64) => { const r = thumbHashToRGBA(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
      return [r.w, r.h, Array.from(r.rgba)]; } };
})(thumbframeViewerCore);
