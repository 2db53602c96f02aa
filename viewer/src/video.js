// Videos, animated images, Live and Motion Photos: which file a <video> plays (the original where
// this browser plays it, else the rendition every browser plays), a sentence where none plays,
// scrub previews from the sprite sheet (while seeking, and on hover over the timeline), a grid
// cell's badge, and a photo's motion played over it.
import { $, originalURL, url, displayThumbnail } from "./data.js";

// A video's original as <video> would be asked for it: its MIME type and codec, for
// canPlayType, which answers before a byte is fetched (Safari plays HEVC, Chromium and Firefox
// mostly do not; Matroska, AVI and MPEG-TS play nowhere).
export function videoType(video) {
  const type = { mp4: "video/mp4", mov: "video/mp4", "3gp": "video/3gpp", webm: "video/webm", matroska: "video/x-matroska",
    avi: "video/x-msvideo", mpegts: "video/mp2t" }[video.container] || `video/${video.container}`;
  const codec = { h264: "avc1.42E01E", hevc: "hvc1.1.6.L93.B0", vp9: "vp09.00.10.08", av1: "av01.0.04M.08", vp8: "vp8",
    mpeg4: "mp4v.20.9" }[video.codec];
  return codec ? `${type}; codecs="${codec}"` : type;
}
let probe = null;
const browserPlays = (type) => (probe || (probe = document.createElement("video"))).canPlayType(type) !== "";
const mp4Type = (codecs) => `video/mp4; codecs="${codecs}"`;
// The original's own type: its RFC 6381 codecs where the manifest has them.
const ownType = (video) => video.codecs ? mp4Type(video.codecs) : videoType(video);

// The files a video may play from, best first, as a <video>'s <source> list takes them: the
// original where this browser plays it (`canPlay`, canPlayType's answer), then the rendition
// every browser plays (after it when the original is only to be remuxed: the rendition is the
// same streams, index first).
export function videoSources(video, original, canPlay = browserPlays) {
  const own = original && (video.playable || canPlay(ownType(video))) ? { src: original, type: ownType(video) } : null;
  const made = video.rendition && canPlay(mp4Type(video.rendition.codecs))
    ? { src: url(video.rendition.path), type: mp4Type(video.rendition.codecs) } : null;
  return (video.delivery === "remux" ? [made, own] : [own, made]).filter(Boolean);
}

// A duration as a clock: 0:07, 12:30, 1:02:03.
export function clock(seconds) {
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`
    : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
// What a grid cell says of its kind: a video's length, LIVE, GIF or WEBP; RAW for a JPEG shown
// in place of the RAW shot with it.
export function badge(cell) {
  if (cell.kind === "video" && cell.duration !== undefined) return clock(cell.duration);
  if (cell.kind === "animated") return cell.format.toUpperCase();
  if (cell.motion) return "LIVE";
  if (cell.raw) return "RAW";
  return null;
}

// A Live Photo's MOV is served like an original; a Motion Photo's MP4 lies beside the thumbnails.
export function motionURL(item) {
  const motion = item.motion;
  if (!motion) return null;
  const own = motion.path ? url(motion.path) : motion.original ? originalURL(motion.original) : null;
  const sources = videoSources(motion.video, own);
  return sources.length ? sources[0].src : own;
}
// Plays a photo's motion over `host` (muted, inline) while the pointer is on it or it is pressed.
export function playMotion(host, item, once) {
  const src = motionURL(item);
  if (!src || host.querySelector(".tf-motion")) return;
  const video = document.createElement("video");
  Object.assign(video, { className: "tf-motion", muted: true, playsInline: true, autoplay: true, loop: !once, src });
  if (once) video.addEventListener("ended", () => video.remove());
  host.append(video);
  video.play().catch(() => {});
}
export function stopMotion(host) {
  for (const video of host.querySelectorAll(".tf-motion")) { video.pause(); video.remove(); }
}

// The sprite sheet's tile for a time (clamped to the sheet), and its offset in the sheet.
export function scrubTile(sheet, time) {
  const tile = Math.min(sheet.count - 1, Math.max(0, Math.floor(time / sheet.interval)));
  return { tile, x: (tile % sheet.columns) * sheet.tileWidth, y: Math.floor(tile / sheet.columns) * sheet.tileHeight };
}
// The height of the band along a video's bottom where its native controls (the timeline) are:
// a pointer in it previews the time under it.
export const CONTROLS_BAND = 56;
// The time under a pointer at `x` over a video's box (`left`, `width`), its duration spread across
// the timeline, which native controls draw across the video's width inside a margin.
export function hoverTime(x, left, width, duration) {
  const margin = Math.min(16, width / 10);
  return duration * Math.min(1, Math.max(0, (x - left - margin) / Math.max(1, width - 2 * margin)));
}

let player = null, scrub = null, note = null, image = null, shown = null, scrubTimer = 0;
// The preview of `time` over the video, centred at `centre` (a client x; the video's middle when
// omitted) above its controls.
function showScrub(time, centre) {
  const sheet = shown && shown.video && shown.video.scrub;
  if (!sheet || player.hidden || !(time >= 0)) return;
  const { tile, x, y } = scrubTile(sheet, time);
  const left = parseFloat(player.style.left), top = parseFloat(player.style.top), width = parseFloat(player.style.width);
  const at = centre === undefined ? left + width / 2 : centre;
  Object.assign(scrub.style, {
    width: `${sheet.tileWidth}px`, height: `${sheet.tileHeight}px`, backgroundImage: `url("${url(sheet.sprite)}")`,
    backgroundPosition: `${-x}px ${-y}px`,
    left: `${Math.min(left + width - sheet.tileWidth, Math.max(left, at - sheet.tileWidth / 2))}px`,
    top: `${top + Math.max(0, parseFloat(player.style.height) - sheet.tileHeight - CONTROLS_BAND - 8)}px` });
  scrub.dataset.tile = tile;
  scrub.hidden = false;
  clearTimeout(scrubTimer);
}
function hideScrub(delay) {
  clearTimeout(scrubTimer);
  scrubTimer = setTimeout(() => { scrub.hidden = true; }, delay);
}
// Over the controls band a mouse previews the time under it; elsewhere, or once it leaves, not.
function hover(event) {
  if (event.pointerType !== "mouse" || !shown || !shown.video) return;
  const box = player.getBoundingClientRect();
  if (event.clientY < box.bottom - CONTROLS_BAND) return hideScrub(0);
  const duration = player.duration > 0 ? player.duration : shown.video.duration;
  showScrub(hoverTime(event.clientX, box.left, box.width, duration), event.clientX - box.left + parseFloat(player.style.left));
}

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

export function installVideo() {
  player = $("tf-video");
  scrub = $("tf-scrub");
  note = $("tf-note");
  image = $("tf-image");
  // Every source failed (a <source>'s error does not bubble: caught on the way down): the last
  // one's is the end of the list.
  player.addEventListener("error", (event) => {
    const last = player.lastElementChild;
    if (shown && shown.kind === "video" && last && event.target === last) cannotPlay(shown, last.getAttribute("src"));
  }, true);
  // While the video seeks (its slider dragged, an arrow key), the tile for that time; gone a
  // moment after the seek ends.
  player.addEventListener("seeking", () => showScrub(player.currentTime));
  player.addEventListener("seeked", () => hideScrub(700));
  player.addEventListener("pointermove", hover);
  player.addEventListener("pointerleave", () => hideScrub(0));
}

// Shows `item`'s video in the player (its poster first), or says it does not play here; without
// --original-url and a rendition there is no video to play, and the poster stays. Whether a
// video is in the player.
export function presentVideo(item) {
  shown = item;
  stopVideo(false);
  const original = item.kind === "video" ? originalURL(item.path) : null;
  const rendition = item.video && item.video.rendition ? url(item.video.rendition.path) : null;
  const sources = item.video ? videoSources(item.video, original) : [];
  const video = original || rendition;
  note.hidden = true;
  note.textContent = "";
  player.hidden = !video;
  image.hidden = !!video;
  if (video && !sources.length) cannotPlay(item, original || rendition);
  else if (video) {
    player.poster = url(displayThumbnail(item).path);
    player.replaceChildren(...sources.map((source) => Object.assign(document.createElement("source"), source)));
    player.load();
  }
  return !!video;
}
// Stops the player; `unload`: and stops fetching what it played (the lightbox closes).
export function stopVideo(unload) {
  player.pause();
  hideScrub(0);
  player.removeAttribute("src");
  player.replaceChildren();
  if (unload) player.load();
}
