// An answer laid out: the cards first (the numbers asked for, in human units, with the step
// model's band where the JSON has one), the stacked bar of one GPU's memory with the advice
// that makes it fit, then the tables in words with each JSON key shown small. Every value shown
// is the API's (the CLI's JSON); nothing here computes a number.
import { exact, show } from "./format.js";

const $ = (id) => document.getElementById(id);
const SEGMENT_COLOURS = ["#0b57a4", "#5b8fd0", "#136c2e", "#7a4fb0", "#c25e00", "#a4001d", "#2a8c8c", "#8c6d1f",
  "#555f6d", "#d17fa6", "#3b3b8f", "#6d9f3a", "#99553a", "#1f7a5a"];
export const colour = (i) => SEGMENT_COLOURS[i % SEGMENT_COLOURS.length];

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function fieldOf(fields, path) {
  return fields[path] || { label: path, unit: "number" };
}

// a card's label names its unit where the unit is long ("GPU-hours"): the value shows the number
const CARD_UNIT = { hours: "tokens" };

export function renderCards(cards) {
  const box = $("cards");
  box.replaceChildren();
  for (const c of cards) {
    const card = el("div", c.unit === "text" ? "card wide" : "card");
    card.dataset.path = c.path;
    card.dataset.value = JSON.stringify(c.value);
    card.dataset.unit = c.unit;
    if (c.unit === "bool") card.dataset.tone = c.value ? "good" : "bad";
    const unit = CARD_UNIT[c.unit] || c.unit;
    const value = el("p", "value", c.unit === "bool" ? (c.value ? "yes" : "no") : show(c.value, unit));
    value.title = exact(c.value);
    card.append(el("p", "label", c.label), value);
    if (c.band) {
      const band = el("p", "band", `range ${show(c.band[0], unit)} – ${show(c.band[1], unit)}`);
      band.dataset.band = JSON.stringify(c.band);
      band.title = `the step-time model's band (${c.band_path} in the JSON)`;
      card.append(band);
    }
    if (c.note) card.append(el("p", "note", c.note));
    box.append(card);
  }
}

// weights / gradients / optimizer / activations / KV / runtime reserve against the GPU's memory
export function renderBar(bar) {
  const fig = $("fit-bar");
  fig.replaceChildren();
  fig.hidden = !bar;
  if (!bar) return;
  const values = bar.segments.map((s) => Number(s.value));
  const used = values.reduce((a, b) => a + b, 0);
  const cap = Number(bar.capacity.value);
  const scale = Math.max(used, cap);
  const caption = el("figcaption", null,
    `${show(used, "bytes")} needed of ${show(cap, "bytes")} ${bar.capacity.label} (${show(used / cap, "ratio")})`);
  const track = el("div", "bar-track");
  track.setAttribute("role", "img");
  track.setAttribute("aria-label", `${caption.textContent}: ${bar.segments.map((s, i) => `${s.label} ${show(values[i], "bytes")}`).join(", ")}`);
  let left = 0;
  bar.segments.forEach((s, i) => {
    const seg = el("div", "bar-seg");
    seg.style.left = `${(100 * left) / scale}%`;
    seg.style.width = `${(100 * values[i]) / scale}%`;
    seg.style.background = colour(i);
    seg.dataset.path = s.path;
    seg.title = `${s.label}: ${show(values[i], "bytes")}`;
    track.append(seg);
    left += values[i];
  });
  const capLine = el("div", "bar-cap");
  capLine.style.left = `calc(${(100 * cap) / scale}% - 2px)`;
  capLine.title = `${bar.capacity.label}: ${show(cap, "bytes")}`;
  track.append(capLine);
  const legend = el("ul", "legend");
  bar.segments.forEach((s, i) => {
    const item = el("li");
    const swatch = el("span", "swatch");
    swatch.style.background = colour(i);
    item.append(swatch, `${s.label} ${show(values[i], "bytes")}`);
    legend.append(item);
  });
  const capItem = el("li");
  capItem.append(el("span", "swatch cap-swatch"), `${bar.capacity.label} ${show(cap, "bytes")}`);
  legend.append(capItem);
  fig.append(caption, track, legend);
}

export function renderNotes(lines) {
  $("notes").replaceChildren(...lines.map((line) => el("li", null, line)));
  $("notes-box").hidden = !lines.length;
}

export function renderAdvice(lines) {
  const list = $("advice");
  list.replaceChildren(...lines.map((line) => el("li", null, line)));
  list.hidden = !lines.length;
}

// a two-column table: the quantity in words with its JSON key small, the value in its unit
export function fillTable(table, rows, fields) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const h of ["quantity", "value"]) head.append(el("th", null, h));
  const body = table.createTBody();
  for (const [path, value] of rows) {
    const f = fieldOf(fields, path);
    const row = body.insertRow();
    row.dataset.key = path;
    const name = row.insertCell();
    name.append(f.label, el("span", "key", path));
    const cell = row.insertCell();
    cell.className = "num";
    cell.textContent = show(value, f.unit);
    cell.title = exact(value);
    cell.dataset.value = JSON.stringify(value);
  }
}

// rows of a list answer (compare, sweep, layouts, shapes) as a table, one column per key
export function fillRows(table, rows, columns, prefix, fields) {
  table.replaceChildren();
  if (!rows.length) return;
  const head = table.createTHead().insertRow();
  for (const c of columns) {
    const f = fieldOf(fields, `${prefix}.0.${c}`);
    const th = el("th", null, f.label.split(" › ").pop());
    th.append(el("span", "key", c));
    head.append(th);
  }
  const body = table.createTBody();
  rows.forEach((r, i) => {
    const row = body.insertRow();
    for (const c of columns) {
      const f = fieldOf(fields, `${prefix}.${i}.${c}`);
      const cell = row.insertCell();
      const value = c.split(".").reduce((o, k) => (o == null ? o : o[k]), r);
      cell.textContent = show(value, f.unit);
      cell.title = exact(value);
      cell.dataset.value = JSON.stringify(value ?? null);
      if (typeof value === "number" || /^-?\d+$/.test(value)) cell.className = "num";
    }
  });
}

// the fit verdict and what it means; the estimate's (one GPU, micro-batch 1) is a side note, not
// the headline: training runs on the GPUs asked for (Memory fit and Parallel layout answer that)
export function showVerdict(fits, label, result, tab) {
  const v = $("verdict");
  v.hidden = fits == null;
  v.dataset.fits = String(fits);
  v.classList.toggle("aside", tab === "estimate");
  const gpu = result.gpu || result.memory?.training?.gpu || result.fit?.gpu || result.rows?.[0]?.gpu || "";
  const text = `${fits ? "Fits" : "Does not fit"}${gpu ? ` on ${gpu}` : ""}: ${label}`;
  v.textContent = fits == null ? "" : tab === "estimate" ? `${text}. For the run on several GPUs see Memory fit and Parallel layout.` : `${text}.`;
}
