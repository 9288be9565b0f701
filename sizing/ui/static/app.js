// sizing ui: the page. Every number shown comes from the API (sizing/ui/api.py), which runs the
// same command as `sizing ... --format json`; this file keeps the page's state (the question,
// the model, every option typed, all in the URL), asks, shows progress with a cancel button, and
// lays the answer out (answer.js, charts.js). An error keeps the last answer and marks its field.
import { buildForm, applyNeeds, optionPairs, valueOf, markError, clearErrors } from "./form.js";
import { renderCards, renderNotes, renderBar, renderAdvice, fillTable, fillRows, showVerdict } from "./answer.js";
import { BREAKDOWN, ROWS, FORMULAS, leaves } from "./tabs.js";
import { chartsFor } from "./charts.js";
import { renderBrowse } from "./browse.js";

const $ = (id) => document.getElementById(id);
const TABS = [...document.querySelectorAll("#tabs [role=tab]")].map((b) => b.dataset.tab);
// values a question needs before it can be asked (the CLI requires them too)
const INITIAL = { serve: { prompt: "4096", output: "256" }, plan: { flops: "1e21" } };
const PAGE_KEYS = ["tab", "preset", "with", "set", "config_text", "hub", "source"];
const state = {
  tab: "estimate", lists: null, values: new Map(), charts: [], controller: null, seq: 0, answered: false,
  presets: {}, // list name -> chosen preset (presets, hybrid_presets, vision_presets)
};

function post(endpoint, pairs, signal) {
  return fetch(`/api/${endpoint}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ pairs }), signal });
}
// how the question takes a model (null: it takes none, e.g. plan)
const model = () => { const m = state.lists.models[state.tab]; return m && (m.presets || m.config) ? m : null; };
const source = () => document.querySelector("input[name=source]:checked").value;
const specs = () => state.lists.options[state.tab] || [];

// ---- the model panel ----
function fillPresets() {
  const m = model();
  const list = m?.presets ? state.lists[m.presets] : [];
  const select = $("preset");
  select.replaceChildren(...list.map((p) => new Option(p.name, p.name)));
  const wanted = state.presets[m?.presets] || (m?.presets === "presets" ? "llama2-7b" : list[0]?.name);
  select.value = wanted;
  if (select.value !== wanted && list.length) select.value = list[0].name;
}
function showModelPanel() {
  const m = model();
  $("model-panel").hidden = !m || (!m.presets && !m.config);
  for (const input of document.querySelectorAll("input[name=source]")) {
    input.disabled = input.value !== "preset" && !m?.config;
    input.closest("label").hidden = input.disabled;
  }
  if (m && !m.config && source() !== "preset") document.querySelector("input[name=source][value=preset]").checked = true;
  const from = source();
  $("source-preset").hidden = from !== "preset";
  $("source-paste").hidden = from !== "paste";
  $("source-hub").hidden = from !== "hub";
  $("set-box").hidden = !m?.set;
  $("set-help").textContent = m?.set_help || "";
  $("compare-box").hidden = !m?.multiple;
}
function modelName() {
  const from = source();
  if (from === "hub") return `Hugging Face: ${$("hub").value.trim()}`;
  if (from === "paste") {
    let name = "";
    try { const cfg = JSON.parse($("config_text").value); name = cfg._name_or_path || cfg.model_type || ""; } catch { /* the API says why */ }
    return `Pasted config.json${name ? `: ${name}` : ""}`;
  }
  return $("preset").value;
}
function modelPairs() {
  const m = model();
  if (!m) return [];
  const pairs = [];
  const from = source();
  if (from === "paste") pairs.push(["config_text", $("config_text").value.trim()]);
  else if (from === "hub") pairs.push(["hub", $("hub").value.trim()]);
  else if (m.presets) pairs.push(["preset", $("preset").value]);
  if (m.multiple) for (const o of $("compare_with").selectedOptions) pairs.push(["preset", o.value]);
  if (m.set) for (const line of $("set").value.split("\n").map((s) => s.trim()).filter(Boolean)) pairs.push(["set", line]);
  return pairs;
}

// ---- the URL holds the page ----
function pageUrl() {
  const q = new URLSearchParams([["tab", state.tab]]);
  const m = model();
  if (m) {
    const from = source();
    if (from !== "preset") q.append("source", from);
    if (m.presets) q.append("preset", $("preset").value);
    if (from === "paste") q.append("config_text", $("config_text").value.trim());
    if (from === "hub") q.append("hub", $("hub").value.trim());
    if (m.multiple) for (const o of $("compare_with").selectedOptions) q.append("with", o.value);
    for (const line of $("set").value.split("\n").map((s) => s.trim()).filter(Boolean)) q.append("set", line);
  }
  for (const [k, v] of state.values) if (v !== "") q.append(k, v);
  return `${location.pathname}?${q}`;
}
function readUrl() {
  const q = new URLSearchParams(location.search);
  state.tab = TABS.includes(q.get("tab")) ? q.get("tab") : "estimate";
  const from = q.get("source") || (q.get("config_text") ? "paste" : q.get("hub") ? "hub" : "preset");
  document.querySelector(`input[name=source][value=${["paste", "hub"].includes(from) ? from : "preset"}]`).checked = true;
  const list = state.lists.models[state.tab]?.presets;
  if (q.get("preset") && list) state.presets[list] = q.get("preset");
  $("config_text").value = q.get("config_text") || "";
  $("hub").value = q.get("hub") || "";
  $("set").value = q.getAll("set").join("\n");
  const others = new Set(q.getAll("with"));
  for (const o of $("compare_with").options) o.selected = others.has(o.value);
  for (const [k, v] of q) if (!PAGE_KEYS.includes(k)) state.values.set(k, state.values.has(k) ? `${state.values.get(k)}, ${v}` : v);
}

// ---- progress, errors, the answer ----
function busy(on, text = "Calculating…") {
  document.body.dataset.state = on ? "busy" : "done";
  $("progress").hidden = !on;
  $("cancel").hidden = !on;
  $("progress-text").textContent = text;
  $("answer").setAttribute("aria-busy", String(on));
  clearInterval(state.timer);
  if (on) {
    const started = performance.now();
    state.timer = setInterval(() => {
      const s = (performance.now() - started) / 1000;
      if (s >= 1) $("progress-text").textContent = `${text} ${s.toFixed(0)} s`;
    }, 250);
  }
}
function stale(on) {
  $("answer-body").classList.toggle("stale", on && state.answered);
  $("stale-note").hidden = !(on && state.answered);
}
function clearCharts() {
  for (const c of state.charts) c.destroy();
  state.charts = [];
  for (const box of document.querySelectorAll(".chart-box")) box.hidden = true;
}
function showError(message) {
  $("error").textContent = `Error: ${message}`;
  $("error").hidden = false;
  if (!markError($("options"), specs(), message)) markModelError(message);
  stale(true);
}
function markModelError(message) {
  const id = /--set\b/.test(message) ? "set" : /hub/.test(message) && source() === "hub" ? "hub"
    : source() === "paste" && /config/.test(message) ? "config_text" : /--preset\b/.test(message) ? "preset" : null;
  if (id) $(id).setAttribute("aria-invalid", "true");
}
function clearModelErrors() { for (const id of ["set", "hub", "config_text", "preset"]) $(id).removeAttribute("aria-invalid"); }

async function render(body, pairs, signal, seq) {
  const r = body.result;
  state.answered = true;
  stale(false);
  $("model-name").textContent = model() ? `Model: ${modelName()}` : "";
  $("model-name").hidden = !model();
  showVerdict(body.verdict, body.verdict_label, r, state.tab);
  renderCards(body.cards);
  renderNotes(body.notes);
  renderBar(body.bar);
  renderAdvice(body.advice);
  const rows = ROWS[state.tab](r);
  $("rows-box").hidden = !rows || !rows[0]?.length;
  if (rows) fillRows($("rows"), rows[0] || [], rows[1], rows[2], body.fields);
  const breakdown = BREAKDOWN[state.tab](r);
  $("breakdown-title").hidden = !breakdown.length;
  $("breakdown-box").hidden = !breakdown.length;
  fillTable($("breakdown"), breakdown, body.fields);
  const formulas = FORMULAS[state.tab](r, body.formulas);
  $("formulas").replaceChildren();
  fillFormulas($("formulas"), formulas);
  fillTable($("all-numbers"), leaves(r), body.fields);
  $("command").textContent = body.command;
  const blob = new Blob([JSON.stringify(r, null, 2)], { type: "application/json" });
  $("download").href = URL.createObjectURL(blob);
  $("download").download = `sizing-${state.tab}.json`;
  $("fit-gpus-line").hidden = !body.verdict_label;
  $("fit-gpus").textContent = "";
  if (state.tab === "serve" && r.prefill) busy(true, "Drawing throughput against latency…");
  const configs = await chartsFor(state.tab, r, body.fields, pairs, post, signal);
  if (seq !== state.seq) return;
  draw(configs);
}
function fillFormulas(table, rows) {
  const head = table.createTHead().insertRow();
  for (const h of ["quantity", "with your numbers", "formula"]) { const th = document.createElement("th"); th.textContent = h; head.append(th); }
  const tbody = table.createTBody();
  for (const r of rows) { const row = tbody.insertRow(); row.dataset.key = r[0]; for (const c of r) row.insertCell().textContent = c; }
}
function draw(configs) {
  clearCharts();
  const boxes = document.querySelectorAll(".chart-box");
  configs.slice(0, boxes.length).forEach((config, i) => {
    boxes[i].hidden = false;
    boxes[i].classList.toggle("tall", Boolean(config.options.tall));
    const canvas = boxes[i].querySelector("canvas");
    canvas.setAttribute("aria-label", config.options.plugins?.title?.text || config.data.datasets[0]?.label || "chart");
    if (window.Chart) state.charts.push(new window.Chart(canvas, config));
  });
}

// the chosen model source holds nothing yet (a hub id or config still to type): nothing to ask
function waiting() {
  const from = source();
  const empty = model() && ((from === "hub" && !$("hub").value.trim()) || (from === "paste" && !$("config_text").value.trim()));
  if (empty) { $("model-name").textContent = from === "hub" ? "Type a Hugging Face model id." : "Paste a config.json."; $("model-name").hidden = false; }
  return empty;
}

async function run() {
  if (state.tab === "browse" || waiting()) return;
  state.controller?.abort();
  const controller = new AbortController();
  state.controller = controller;
  const seq = ++state.seq;
  const pairs = [...modelPairs(), ...optionPairs($("options"), specs())];
  history.replaceState(null, "", pageUrl());
  $("permalink").href = pageUrl();
  clearErrors($("options"));
  clearModelErrors();
  $("error").hidden = true;
  clearCharts();
  stale(true);
  busy(true);
  let outcome = "answer";
  try {
    const res = await post(state.tab, pairs, controller.signal);
    const body = await res.json();
    if (seq !== state.seq) return;
    if (!res.ok) { showError(body.error); outcome = "error"; }
    else await render(body, pairs, controller.signal, seq);
  } catch (exc) {
    if (seq !== state.seq) return;
    if (exc.name === "AbortError") { outcome = "cancelled"; stale(true); }
    else { showError(String(exc)); outcome = "error"; }
  } finally {
    if (seq === state.seq) {
      busy(false);
      if (outcome === "cancelled") { $("progress").hidden = false; $("progress-text").textContent = "Cancelled."; $("cancel").hidden = true; }
      document.body.dataset.outcome = outcome;
      document.body.dataset.seq = String(seq); // which question the page shows (the tests wait on it)
    }
  }
}

async function fitList() {
  $("fit-gpus").textContent = "asking every GPU…";
  const pairs = [...modelPairs(), ...optionPairs($("options"), specs())];
  const res = await fetch(`/api/fits/${state.tab}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ pairs }) });
  const fits = await res.json();
  const names = Array.isArray(fits) ? fits.filter((g) => g.fits).map((g) => g.gpu) : [];
  $("fit-gpus").textContent = res.ok ? (names.length ? `fits on ${names.join(", ")}` : "fits on none of the listed GPUs") : fits.error;
  $("fit-gpus").dataset.gpus = JSON.stringify(names);
}

// ---- questions ----
function selectTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll("#tabs [role=tab]")) {
    const on = b.dataset.tab === tab;
    b.setAttribute("aria-selected", String(on));
    b.tabIndex = on ? 0 : -1;
    if (on) b.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
  $("question").textContent = document.querySelector(`#tabs [data-tab="${tab}"]`).dataset.question;
  const browsing = tab === "browse";
  $("answer-body").hidden = browsing;
  $("browse").hidden = !browsing;
  $("options-panel").hidden = browsing;
  $("answer-title").textContent = browsing ? "Presets and GPUs" : "Answer";
  if (browsing) {
    $("model-panel").hidden = true;
    renderBrowse(state.lists, $("browse-filter").value, pickPreset);
    document.body.dataset.state = "done";
    history.replaceState(null, "", `${location.pathname}?tab=browse`);
    return;
  }
  for (const [k, v] of Object.entries(INITIAL[tab] || {})) if (!state.values.has(k)) state.values.set(k, v);
  showModelPanel();
  fillPresets();
  $("options-title").textContent = "Options";
  buildForm($("options"), specs(), state.lists.groups, state.values, state.lists);
}
function pickPreset(name, kind) {
  const tab = kind === "hybrid" ? "hybrid" : kind === "vision" ? "vision" : "estimate";
  state.presets[kind === "hybrid" ? "hybrid_presets" : kind === "vision" ? "vision_presets" : "presets"] = name;
  document.querySelector("input[name=source][value=preset]").checked = true;
  selectTab(tab);
  run();
}
function onTabKey(event) {
  const i = TABS.indexOf(state.tab);
  const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[event.key];
  if (next === undefined) return;
  event.preventDefault();
  const tab = TABS[(next + TABS.length) % TABS.length];
  document.querySelector(`#tabs [data-tab="${tab}"]`).focus();
  selectTab(tab);
  run();
}

function wire() {
  for (const b of document.querySelectorAll("#tabs [role=tab]")) b.addEventListener("click", () => { selectTab(b.dataset.tab); run(); });
  $("tabs").addEventListener("keydown", onTabKey);
  $("run").addEventListener("click", run);
  $("cancel").addEventListener("click", () => state.controller?.abort());
  $("fit-gpus-run").addEventListener("click", fitList);
  $("browse-filter").addEventListener("input", () => renderBrowse(state.lists, $("browse-filter").value, pickPreset));
  const form = $("options");
  form.addEventListener("input", (e) => { state.values.set(e.target.name, valueOf(e.target)); applyNeeds(form, specs()); });
  form.addEventListener("change", (e) => { state.values.set(e.target.name, valueOf(e.target)); applyNeeds(form, specs()); run(); });
  form.addEventListener("submit", (e) => { e.preventDefault(); run(); });
  form.addEventListener("keydown", (e) => { if (e.key === "Enter" && e.target.tagName === "INPUT") { e.preventDefault(); run(); } });
  $("preset").addEventListener("change", () => { state.presets[model().presets] = $("preset").value; run(); });
  for (const input of document.querySelectorAll("input[name=source]")) input.addEventListener("change", () => { showModelPanel(); run(); });
  for (const id of ["config_text", "hub", "set", "compare_with"]) $(id).addEventListener("change", run);
}
async function start() {
  state.lists = await (await fetch("/api/lists")).json();
  for (const p of state.lists.presets) $("compare_with").add(new Option(p.name, p.name));
  readUrl();
  wire();
  selectTab(state.tab);
  if (state.tab !== "browse") await run();
}
start();
