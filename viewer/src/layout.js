// The grid's and the lightbox's arithmetic, without a page: the manifest's layout engine for a
// window no viewport matches, justified rows, and which deep-zoom level and tiles a view needs.

// How far a grid cell's thumbnail may stretch over the device's pixels before the next larger
// one is fetched (1.25: upscaling by it is not seen on a 2x screen).
export const TILE_STRETCH = 1.25;
// How far the lightbox stretches a rendition's or a deep-zoom level's pixels over the device's
// before it fetches the next (whose pixels are 2.5 to 4 times as many): up to a CSS pixel a
// picture pixel, within 1.25 and 2 — 1.25 on a 1x screen, 2 at 2x and 3x (OpenSeadragon's
// default, minPixelRatio 0.5, stretches up to 2 on every screen). A picture pixel never covers
// more than a CSS pixel, and the pixels fetched stay within 1.5 times those shown at any zoom
// on phones and laptops, where a fixed 1.25 fetched up to 3.1 times (viewer/test/layout.test.js).
export const zoomStretch = (scale) => Math.min(2, Math.max(TILE_STRETCH, scale));

// The manifest's layout engine (LayoutEngine in Swift), for a window no viewport matches.
export function layoutFor(w, h, screenW, screenH, scale, preset) {
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

// The cells a section's page shows: an item in no stack, or a stack's cover (its other members
// are in the strip the cover opens).
export const shownCells = (cells) => cells.filter((cell) => !cell.stack || cell.stack.cover === cell.item);

// Justified rows of `cells` (each with width and height) across `width`: a row closes once its
// cells at the target height fill the width, then is scaled to fill it exactly; the last row
// keeps the target height unless its cells overflow it. Each row: its cells, their widths, its height.
export function justify(cells, width, target, gap) {
  const rows = [];
  let row = [], aspectSum = 0;
  const flush = (last) => {
    if (!row.length) return;
    const aspects = row.map((cell) => cell.width / cell.height);
    const fill = (width - gap * (row.length - 1)) / aspects.reduce((a, b) => a + b, 0);
    const height = last ? Math.min(target, fill) : fill;
    rows.push({ cells: row, widths: aspects.map((aspect) => aspect * height), height });
    row = [];
    aspectSum = 0;
  };
  for (const cell of cells) {
    row.push(cell);
    aspectSum += cell.width / cell.height;
    if (aspectSum * target + gap * (row.length - 1) >= width) flush(false);
  }
  flush(true);
  return rows;
}

// The `sizes` a cell's srcset is chosen by: its width over TILE_STRETCH, so a rendition whose
// pixels cover the cell's device pixels within the stretch is taken (a 16:9 cell of a phone's row
// takes the 512-px rendition stretched by 1.15, not the 1 280-px one, five times its bytes).
export const cellSizes = (cellWidth) => `${Math.ceil(cellWidth / TILE_STRETCH)}px`;
// The rendition a browser takes from a cell's srcset (`renditions`, each with its width, narrowest
// first) at `scale`: the narrowest covering the cell's device pixels over TILE_STRETCH, else the
// widest; null when there are none. ViewerWriter.inlinePicture chooses as this does.
export function srcsetChoice(renditions, cellWidth, scale) {
  const need = Math.ceil(cellWidth / TILE_STRETCH) * scale;
  return renditions.find((rendition) => rendition.width >= need) || renditions[renditions.length - 1] || null;
}

// A DeepZoom pyramid's level for a picture shown `device` pixels wide: the smallest level at
// least as wide as that over `stretch` (the full size past it). Levels count from 0 (1x1).
export function tileLevel(width, levels, device, stretch = TILE_STRETCH) {
  const top = levels - 1;
  let level = top;
  while (level > 0 && Math.ceil(width / 2 ** (top - level + 1)) * stretch >= device - 0.5) level--;
  return level;
}

// The tiles of a level (`size` px square, `overlap` px of each neighbour on inner sides) that
// meet the view [x0, x1) x [y0, y1) in level pixels, each with its box in level pixels; at most
// 65 x 65 of them, so a hostile size cannot make the loop long.
export function tilesInView(width, height, size, overlap, view) {
  const columns = Math.ceil(width / size), rows = Math.ceil(height / size);
  const c0 = Math.max(0, Math.floor(view.x0 / size)), c1 = Math.min(columns - 1, Math.floor(view.x1 / size), c0 + 64);
  const r0 = Math.max(0, Math.floor(view.y0 / size)), r1 = Math.min(rows - 1, Math.floor(view.y1 / size), r0 + 64);
  const tiles = [];
  for (let c = c0; c <= c1; c++) {
    for (let r = r0; r <= r1; r++) {
      const x = c * size - (c > 0 ? overlap : 0), y = r * size - (r > 0 ? overlap : 0);
      tiles.push({ name: `${c}_${r}`, x, y, width: Math.min(width, (c + 1) * size + overlap) - x,
        height: Math.min(height, (r + 1) * size + overlap) - y });
    }
  }
  return tiles;
}
