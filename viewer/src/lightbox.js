// The lightbox: one photo or video at the manifest's frame, paged through what the grid shows,
// its caption and stack strip, a deep link per photo (Back closes it), the keyboard, focus kept
// inside, and the hands' gestures (swipe to page, pull down to dismiss, double tap to zoom).
import { $, url, library, options, itemAt, loadedItem, sectionOf, findCell, loaded, describe, placeLabel, stackWords,
  displayThumbnail, originalURL, paintPlaceholder } from "./data.js";
import { layoutFor } from "./layout.js";
import { clock, motionURL, playMotion, stopMotion, presentVideo, stopVideo } from "./video.js";
import { present, zoomLevel, toggleZoom, stepZoom, pointerCount } from "./zoom.js";

// An index into a library of `count`, wrapped around at both ends.
export const wrap = (index, count) => ((index % count) + count) % count;
// Deep links: an open photo is `#<its path>` in the address bar.
export const linkOf = (item) => "#" + item.path.split("/").map(encodeURIComponent).join("/");
// The path a hash names, or null for one that is no path (malformed escapes, another page's anchor).
export function pathOfHash(hash) {
  try {
    return hash.slice(1).split("/").map(decodeURIComponent).join("/") || null;
  } catch {
    return null;
  }
}
// The caption bar's line: section, position, path, kind, place and stack, in words.
export function caption(item, section, index, videoShown) {
  const kind = item.kind === "video" && item.video ? ` · ${clock(item.video.duration)}${videoShown ? "" : " (video not published)"}`
    : item.rawFile ? ` · RAW + ${item.image.format.toUpperCase()}` : "";
  const stacked = item.stack ? ` · ${stackWords[item.stack.reason] || "a stack"}` : "";
  const where = item.place ? ` · ${placeLabel(item.place)}` : "";
  return `${section.title} · ${index - section.start + 1} / ${section.count} · ${item.path}${kind}${where}${stacked}`;
}
// What a press was when it ends: a pull down to close, a swipe to the next or previous photo, a
// tap, or nothing (`drag`: its movement on a fitted photo; `tap`: set while it barely moved).
export function gesture(drag, tap) {
  if (drag && drag.dy > 40 && drag.vy >= 0 && Math.abs(drag.dy) > Math.abs(drag.dx) && drag.top === 0) return "close";
  if (drag && Math.abs(drag.dx) > 50 && Math.abs(drag.dx) > Math.abs(drag.dy)) return drag.dx < 0 ? "next" : "previous";
  return tap ? "tap" : null;
}

// The layout for this window: the manifest's where a viewport matches it, else the same engine's.
function layout(item) {
  const settings = options();
  const viewport = settings.viewports.find((v) => v.width === innerWidth && v.height === innerHeight);
  if (viewport && item.layouts[viewport.name]) return { ...item.layouts[viewport.name], viewport: viewport.name };
  const [w, h] = loaded(item).layoutSize;
  const fitted = layoutFor(w, h, innerWidth, innerHeight, devicePixelRatio || 1, settings.preset);
  // A video does not zoom, as in the manifest's own layouts: its range is the fit.
  if (item.kind === "video") fitted.zoom = { ...fitted.zoom, max: fitted.zoom.min, doubleTap: fitted.zoom.min };
  return { ...fitted, viewport: null };
}

let box, image, content, scroller, live, rawLink, strip;
let current = -1, historyEntry = false, leaving = false;
export const isOpen = () => box && !box.hidden;
export const layoutOf = (index) => layout(loadedItem(index));

export async function show(index) {
  const wanted = wrap(index, library().itemCount);
  const item = await itemAt(wanted);
  current = wanted;
  const L = layout(item);
  image.removeAttribute("src");
  image.style.backgroundImage = "";
  paintPlaceholder(image, item);
  image.dataset.viewport = L.viewport || "";
  image.dataset.index = current;
  image.alt = describe(item);
  stopMotion(content);
  const videoShown = presentVideo(item);
  $("tf-video").dataset.index = current;
  present(item, L, loaded(item));
  scroller.scrollTop = 0;  // long images start at the top
  scroller.scrollLeft = 0;
  // A video's own controls are along its bottom: its caption bar goes to the top.
  box.dataset.kind = item.kind;
  live.hidden = !motionURL(item);
  // A RAW + JPEG pair: the RAW is offered as the original to download, where originals are served.
  const raw = item.rawFile ? originalURL(item.rawFile.original) : null;
  rawLink.hidden = !raw;
  if (raw) rawLink.href = raw;
  else rawLink.removeAttribute("href");
  const section = sectionOf(current);
  $("tf-caption").textContent = caption(item, section, current, videoShown);
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

// Paging (arrows, swipes, keys) goes through what the grid shows: an item in no stack, or a
// stack's cover; a stack's other members are reached from its strip.
async function page(direction) {
  const count = library().itemCount;
  let index = current;
  for (let step = 0; step < count; step++) {
    index = wrap(index + direction, count);
    const item = await itemAt(index);
    if (!item.stack || item.stack.cover === item.item) return show(index);
  }
}

// A photo of a stack shows the stack as a strip of its members' thumbnails under it: a tap
// shows that member. The cover's entry lists them; a member's names its cover.
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
    const button = Object.assign(document.createElement("button"), { type: "button" });
    button.setAttribute("aria-label", describe(member));
    if (position === item.item) button.setAttribute("aria-current", "true");
    const small = member.thumbnails[options().thumbnails[0].name] || displayThumbnail(member);
    button.style.backgroundImage = `url("${url(small.path)}")`;
    button.addEventListener("click", () => show(section.start + position));
    strip.append(button);
  }
}

// While the lightbox is open the page under it is out of reach: no focus, nothing read out.
function coverPage(covered) {
  for (const element of [document.querySelector("body > header"), $("tf-grid"), $("tf-scrubber")]) {
    if (!element) continue;
    element.inert = covered;
    if (covered) element.setAttribute("aria-hidden", "true");
    else element.removeAttribute("aria-hidden");
  }
}
export async function open(index) {
  box.hidden = false;
  coverPage(true);
  document.body.style.overflow = "hidden";
  await show(index);
  $("tf-close").focus();
}
// Closes the lightbox at once; its history entry is left too (`fromHistory`: Back already did).
export function close(fromHistory) {
  if (box.hidden) return;
  if (historyEntry && fromHistory !== true) {
    leaving = true;  // the popstate this causes is ours
    history.back();
  }
  historyEntry = false;
  stopVideo(true);
  stopMotion(content);
  box.hidden = true;
  coverPage(false);
  $("tf-announce").textContent = "";
  document.body.style.overflow = "";
  // The grid brings the photo's cell into the page (it may have scrolled out while paging).
  document.dispatchEvent(new CustomEvent("tf-reveal", { detail: current }));
  const cell = document.querySelector(`.tf-cell[data-index="${current}"]`);
  if (cell) cell.focus();
}

// The item a `#path` names: its directory's section first (sections by directory), then the rest.
// `atLoad`: the page was opened at this address; its entry becomes the grid's, and the photo
// gets its own above it, so Back (or ✕) returns to the grid, never away from the page.
export async function openLink(atLoad) {
  const path = pathOfHash(location.hash);
  const shown = loadedItem(current);
  if (!path || (!box.hidden && shown && shown.path === path)) return;
  const directory = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  const found = await findCell((cell) => cell.path === path, (section) => section.name === directory);
  if (!found) return;
  if (atLoad) history.replaceState(null, "", location.pathname + location.search);
  historyEntry = !atLoad;
  return open(found.flat);
}

// Pointer gestures of a fitted photo: pulling down scales and fades it by the preset's rule.
let drag = null, tap = null, lastTap = null;
function resetDrag() {
  drag = null;
  image.style.transform = "";
  $("tf-mask").style.opacity = "1";
}
function pull(event) {
  if (tap && Math.hypot(event.clientX - tap.x, event.clientY - tap.y) >= 8) tap = null;
  if (!drag) return;
  const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
  Object.assign(drag, { vy: dy - drag.dy, dx, dy });
  if (dy > 0 && Math.abs(dy) > Math.abs(dx) && drag.top === 0) {
    const rule = options().frontend.dismiss;
    const scale = rule ? Math.min(1, Math.max(rule.minScale, 1 - dy / innerHeight)) : 1;
    const alpha = rule ? Math.pow(scale, rule.maskAlphaExponent) : Math.max(0, 1 - dy / innerHeight);
    image.style.transform = `translate(${dx}px, ${dy}px) scale(${scale})`;
    $("tf-mask").style.opacity = `${alpha}`;
  }
}
// A tap is a press that barely moves, zoomed or not; two within 300 ms and 30 px toggle the zoom.
function release(event) {
  const ended = gesture(drag, tap);
  resetDrag();
  tap = null;
  if (ended === "close") return close();
  if (ended === "next" || ended === "previous") return page(ended === "next" ? 1 : -1);
  if (ended !== "tap") return;
  if (lastTap && event.timeStamp - lastTap.time < 300 && Math.hypot(event.clientX - lastTap.x, event.clientY - lastTap.y) < 30) {
    lastTap = null;
    toggleZoom(event.clientX, event.clientY);
  } else lastTap = { time: event.timeStamp, x: event.clientX, y: event.clientY };
}
function installGestures() {
  scroller.addEventListener("pointerdown", (event) => {
    // A second finger is a pinch (zoom.js): no drag, no tap.
    if (pointerCount() > 1) return resetDrag(), (tap = null);
    tap = { x: event.clientX, y: event.clientY };
    if (zoomLevel() === 1) drag = { x: event.clientX, y: event.clientY, dx: 0, dy: 0, vy: 0, t: event.timeStamp, top: scroller.scrollTop };
  });
  scroller.addEventListener("pointermove", pull);
  // The browser took the gesture (a native pan, a system gesture): nothing stays shrunk or dimmed.
  scroller.addEventListener("pointercancel", () => {
    tap = null;
    resetDrag();
  });
  scroller.addEventListener("pointerup", release);
  scroller.addEventListener("dblclick", (event) => event.preventDefault());
}

// The keyboard scrolls a long (or zoomed) image as it would a page.
const scrollKeys = {
  ArrowDown: () => 40, ArrowUp: () => -40, PageDown: () => innerHeight * 0.9, PageUp: () => -innerHeight * 0.9,
  " ": () => innerHeight * 0.9, Home: () => -scroller.scrollHeight, End: () => scroller.scrollHeight,
};
function key(event) {
  if (box.hidden) return;
  // Zoomed in, the arrows move about the photo (as PhotoSwipe's do); fitted, they page.
  if (zoomLevel() > 1 && (event.key === "ArrowRight" || event.key === "ArrowLeft"))
    scroller.scrollBy({ left: (event.key === "ArrowRight" ? 1 : -1) * Math.max(40, innerWidth * 0.1), behavior: "instant" });
  else if (event.key === "ArrowRight") page(1);
  else if (event.key === "ArrowLeft") page(-1);
  else if (event.key === "Escape") close();
  else if (event.key === "+" || event.key === "=") stepZoom(true);
  else if (event.key === "-") stepZoom(false);
  else if (scrollKeys[event.key]) scroller.scrollBy({ top: scrollKeys[event.key](), behavior: "instant" });
  else return;
  event.preventDefault();
}
// Keyboard focus stays in the open lightbox: Tab and Shift+Tab cycle through its controls.
function trapFocus(event) {
  if (event.key !== "Tab") return;
  const controls = [...box.querySelectorAll("button, a[href], video[controls]")].filter((e) => !e.hidden && e.offsetParent);
  if (!controls.length) return;
  const at = controls.indexOf(document.activeElement);
  controls[(at + (event.shiftKey ? -1 : 1) + controls.length) % controls.length].focus();
  event.preventDefault();
}
// The motion video takes the image's place and size.
function placeMotion() {
  for (const video of content.querySelectorAll(".tf-motion"))
    Object.assign(video.style, { left: image.style.left, top: image.style.top, width: image.style.width, height: image.style.height });
}

export function installLightbox() {
  [box, image, content, scroller] = ["tf-lightbox", "tf-image", "tf-content", "tf-scroll"].map($);
  [live, rawLink, strip] = ["tf-live", "tf-raw", "tf-strip"].map($);
  installGestures();
  box.addEventListener("keydown", trapFocus);
  document.addEventListener("keydown", key);
  $("tf-prev").addEventListener("click", () => page(-1));
  $("tf-next").addEventListener("click", () => page(1));
  $("tf-close").addEventListener("click", close);
  // A Live or Motion Photo: the motion plays over the photo while the mouse is on it, or once
  // from the LIVE button (a press on a phone).
  image.addEventListener("pointerenter", (event) => {
    if (event.pointerType === "mouse" && loadedItem(current)) playMotion(content, loadedItem(current), false);
  });
  image.addEventListener("pointerleave", () => stopMotion(content));
  live.addEventListener("click", () => { stopMotion(content); playMotion(content, loadedItem(current), true); placeMotion(); });
  new MutationObserver(placeMotion).observe(content, { childList: true });
  // Leaving a photo's entry must not scroll the grid back to where it was when the entry was made.
  history.scrollRestoration = "manual";
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
  // A rotated phone or a resized window: the open photo takes the new frame.
  addEventListener("resize", () => { if (!box.hidden) show(current); });
}
