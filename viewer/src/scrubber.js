// The timeline's scrubber: a track down the window's right edge with the manifest's marks (each
// month where the library is ordered by capture time, else each section; `timeline`), laid at
// their rows' places in the grid; dragging it, or its keys, jumps anywhere — the rows there
// are drawn from the manifest's geometry at once, their cells fetched when they come.
import { $, library } from "./data.js";
import { currentTimeline, gridTop, update, hold } from "./grid.js";
import { blockOf, cellTop } from "./timeline.js";

let marks = [];  // { label, y } in page coordinates, in order

// Where each mark's row is on the page.
export function placeMarks(entries, timeline, top) {
  return entries.map((entry) => {
    const block = blockOf(timeline, entry.section, entry.page);
    return { label: entry.label, y: block ? top + cellTop(timeline, block, entry.cell) : top };
  });
}

// The mark at or before page offset `y` (the first when none is).
export function markAt(list, y) {
  let found = list[0];
  for (const mark of list) if (mark.y <= y + 1) found = mark;
  return found;
}

// What a mark says on the track: a month's year at its first month, a section's title.
export const trackLabel = (mark, previous) =>
  /^\d{4}-\d{2}$/.test(mark.label) ? (previous && previous.label.slice(0, 4) === mark.label.slice(0, 4) ? "" : mark.label.slice(0, 4))
    : mark.label;

const maxScroll = () => Math.max(1, document.documentElement.scrollHeight - innerHeight);

function draw() {
  const track = $("tf-scrubber"), timeline = currentTimeline(), entries = library().timeline || [];
  track.hidden = entries.length < 2 || !timeline || timeline.height < 3 * innerHeight;
  if (track.hidden) return;
  marks = placeMarks(entries, timeline, gridTop());
  const labels = track.querySelector(".tf-marks");
  labels.replaceChildren();
  let last = -100;
  marks.forEach((mark, k) => {
    const text = trackLabel(mark, marks[k - 1]), at = (mark.y / maxScroll()) * 100;
    if (!text || at - last < 4) return;  // (labels 4 % apart at least)
    last = at;
    const label = Object.assign(document.createElement("span"), { textContent: text });
    label.style.top = `${Math.min(97, at)}%`;
    labels.append(label);
  });
  follow();
}

// The handle where the view is, and the slider's value for a screen reader.
function follow() {
  const track = $("tf-scrubber");
  if (track.hidden || !marks.length) return;
  const fraction = Math.min(1, scrollY / maxScroll());
  // (Moved by a transform: a handle that follows the view is no layout shift.)
  track.querySelector(".tf-handle").style.transform = `translateY(${fraction * track.clientHeight}px)`;
  const mark = markAt(marks, scrollY + innerHeight / 3);
  track.setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
  track.setAttribute("aria-valuetext", mark.label);
  track.querySelector(".tf-bubble").textContent = mark.label;
}

function jump(y) {
  scrollTo(0, Math.max(0, Math.min(maxScroll(), y)));
  update();
  follow();
}

export function installScrubber() {
  const track = $("tf-scrubber");
  const toY = (event) => {
    const box = track.getBoundingClientRect();
    return Math.min(1, Math.max(0, (event.clientY - box.top) / box.height)) * maxScroll();
  };
  // While dragged, the rows passed over are boxes: what is fetched is for where it is let go.
  track.addEventListener("pointerdown", (event) => {
    track.setPointerCapture(event.pointerId);
    track.classList.add("tf-dragging");
    hold(true);
    jump(toY(event));
  });
  track.addEventListener("pointermove", (event) => { if (track.hasPointerCapture(event.pointerId)) jump(toY(event)); });
  const release = () => {
    if (!track.classList.contains("tf-dragging")) return;
    track.classList.remove("tf-dragging");
    hold(false);
  };
  track.addEventListener("pointerup", release);
  track.addEventListener("pointercancel", release);
  track.addEventListener("lostpointercapture", release);
  // Keys go from mark to mark (Page keys a year's worth).
  track.addEventListener("keydown", (event) => {
    const steps = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, PageDown: 12, PageUp: -12 }[event.key];
    if (!steps && event.key !== "Home" && event.key !== "End") return;
    event.preventDefault();
    const current = marks.indexOf(markAt(marks, scrollY + innerHeight / 3));
    const next = event.key === "Home" ? 0 : event.key === "End" ? marks.length - 1 : Math.max(0, Math.min(marks.length - 1, current + steps));
    if (marks[next]) jump(marks[next].y - 8);
  });
  // (The handle follows once a frame, not on every scroll event.)
  let pending = false;
  addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; follow(); });
  }, { passive: true });
  addEventListener("resize", draw);
  draw();
}

// The scrubber's marks (the browser tests jump with them).
export const scrubberMarks = () => marks;
