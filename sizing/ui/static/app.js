// sizing ui: the page. Every number shown comes from the API (sizing.ui.api), which runs the
// same command as `sizing ... --format json`; this file only lays the answer out. Integers
// beyond 2^53 arrive as strings and are shown as written, never through a JavaScript number.
"use strict";

const TABS = ["estimate", "memory", "parallel", "serve", "plan", "compare"];
// the values a question needs before it can be asked (the CLI requires them too)
const INITIAL = { serve: { prompt: "4096", output: "256" }, plan: { flops: "1e21" } };
const NO_MODEL = new Set(["plan"]);
const state = { tab: "estimate", lists: null, chart: null, chart2: null, seq: 0 };
const $ = (id) => document.getElementById(id);

// ---- numbers: exact integers with separators, other numbers as JSON writes them ----
function isIntText(v) { return typeof v === "string" && /^-?\d+$/.test(v); }
function show(v) {
  if (v === null || v === undefined) return "-";
  if (isIntText(v)) return BigInt(v).toLocaleString("en-US");
  if (typeof v === "number" && Number.isInteger(v)) return v.toLocaleString("en-US");
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}
function leaves(obj, prefix, out) {
  if (obj !== null && typeof obj === "object") {
    const entries = Array.isArray(obj) ? obj.map((v, i) => [String(i), v]) : Object.entries(obj);
    for (const [k, v] of entries) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.push([prefix, obj]);
  return out;
}
function get(obj, path) { return path.split(".").reduce((o, k) => (o == null ? o : o[k]), obj); }

function cell(row, value, numeric) {
  const td = row.insertCell();
  td.textContent = show(value);
  if (numeric) { td.className = "num"; td.dataset.value = JSON.stringify(value); }
  return td;
}
function fillTable(table, header, rows) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const h of header) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
  const body = table.createTBody();
  for (const r of rows) {
    const row = body.insertRow();
    // the key column, then the value (right-aligned, its exact JSON kept in data-value), then text
    r.forEach((v, i) => (i === 0 ? (cell(row, v, false), (row.dataset.key = v)) : cell(row, v, i === 1)));
  }
}

// ---- the breakdown each question shows: [label, value] rows from its JSON ----
function section(result, path) { return leaves(get(result, path), path, []); }
const BREAKDOWN = {
  estimate: (r) => [...section(r, "params.components"), ["params.total", r.params.total],
    ...section(r, "flops.components"), ["flops.training_per_token", r.flops.training_per_token],
    ...(r.training ? ["flops", "gpu_hours", "wall_clock_days", "cost_usd"].map((k) => [`training.${k}`, r.training[k]]) : [])],
  memory: (r) => (r.per_gpu ? section(r, "per_gpu")
    : ["weights_bytes", "kv_cache_bytes", "prefill_peak_bytes", "peak_bytes", "gpu_memory_bytes", "headroom_bytes",
       "max_batch", "max_context"].map((k) => [k, r[k]])),
  parallel: (r) => [...section(r, "per_gpu"), ["headroom_bytes", r.headroom_bytes]],
  serve: (r) => [...section(r, "latency"), ...section(r, "throughput"), ...section(r, "cost"), ...section(r, "memory")],
  plan: (r) => r.shapes.flatMap((s, i) => ["params", "tokens", "training_flops", "gpu_hours", "fits"]
    .map((k) => [`shapes.${i}.${k} (${s.label})`, s[k]])),
  compare: (r) => r.rows.flatMap((row) => ["params_total", "training_flops_per_token", "training_flops", "gpu_hours",
    "inference_memory_bytes", "training_memory_bytes"].map((k) => [`${row.model}: ${k}`, row[k]])),
};

// ---- formulas with the user's numbers ----
function sumLine(label, parts, total) {
  return [label, `${parts.map(([, v]) => show(v)).join(" + ")} = ${show(total)}`, parts.map(([k]) => k).join(" + ")];
}
const FORMULAS = {
  estimate: (r, f) => [...Object.entries(f.params).map(([k, x]) => [`params ${k}`, `${x.plugged} = ${show(x.per_layer ?? x.value)}${x.per_layer != null ? " per layer" : ""}`, x.formula]),
    ...Object.entries(f.flops).map(([k, x]) => [`FLOPs/token ${k}`, `${x.plugged} = ${show(x.value)}`, x.formula])],
  memory: (r) => (r.per_gpu
    ? [sumLine("bytes per GPU", Object.entries(r.per_gpu).filter(([k]) => k !== "total_bytes"), r.per_gpu.total_bytes)]
    : [["KV cache bytes", `${r.kv_cache_formula} = ${show(r.kv_cache_bytes)}`, "2·L·h_kv·d_h·bytes·positions·batch"],
       sumLine("peak bytes", [["weights", r.weights_bytes], ["KV cache", r.kv_cache_bytes], ["prefill peak", r.prefill_peak_bytes]], r.peak_bytes)]),
  parallel: (r) => [sumLine("bytes on the most-loaded GPU", Object.entries(r.per_gpu)
    .filter(([k]) => !["total_bytes", "cpu_total_bytes"].includes(k) && !k.startsWith("cpu_")), r.per_gpu.total_bytes)],
  serve: (r) => [["decode step seconds (first)", `max(${show(r.decode.first_step.compute_seconds)}, ${show(r.decode.first_step.memory_seconds)}) + ${show(r.decode.first_step.tp_allreduce_seconds)} = ${show(r.decode.first_step.seconds)}`, "max(FLOPs / (peak·eff), bytes / (bandwidth·eff)) + TP all-reduce"],
    ["prefill seconds", `max(${show(r.prefill.compute_seconds)}, ${show(r.prefill.memory_seconds)}) + ${show(r.prefill.tp_allreduce_seconds)} = ${show(r.prefill.seconds)}`, "max(FLOPs / (peak·eff), bytes / (bandwidth·eff)) + TP all-reduce"],
    sumLine("bytes per GPU", [["weights", r.memory.weights_bytes_per_gpu], ["KV", r.memory.kv_bytes_per_gpu], ["prefill peak", r.memory.prefill_peak_bytes]], r.memory.total_bytes_per_gpu)],
  plan: (r) => r.optima.map((o) => [o.name, `${show(o.params)} params · ${show(o.tokens)} tokens`, r.convention]),
  compare: (r) => r.rows.map((row) => [row.model, `${show(row.training_flops_per_token)} × ${show(row.tokens)} = ${show(row.training_flops)}`, "training FLOPs = FLOPs/token × tokens"]),
};

// ---- charts (Chart.js, vendored) ----
const GIB = 2 ** 30;
function bars(title, rows, scale) {
  return { type: "bar", data: { labels: rows.map(([k]) => k), datasets: [{ label: title, data: rows.map(([, v]) => Number(v) / scale) }] },
    options: { indexAxis: "y", animation: false, maintainAspectRatio: false } };
}
const CHARTS = {
  estimate: (r) => bars("parameters (millions)", Object.entries(r.params.components), 1e6),
  memory: (r) => bars("GiB per GPU", r.per_gpu ? Object.entries(r.per_gpu).filter(([k]) => k !== "total_bytes")
    : [["weights", r.weights_bytes], ["KV cache", r.kv_cache_bytes], ["prefill peak", r.prefill_peak_bytes]], GIB),
  parallel: (r) => bars("GiB on the most-loaded GPU", Object.entries(r.per_gpu).filter(([k]) => !k.endsWith("total_bytes")), GIB),
  serve: null, // drawn from several answers: tokens/s against latency over batch sizes
  plan: (r) => {
    const ns = r.optima.map((o) => Number(o.params));
    const lo = Math.min(...ns) / 4, hi = Math.max(...ns) * 4, C = Number(r.flops);
    const curve = Array.from({ length: 25 }, (_, i) => lo * (hi / lo) ** (i / 24)).map((n) => ({ x: n, y: C / (6 * n) }));
    return { type: "scatter", data: { datasets: [
      { label: `iso-FLOP: D = C / (6N), C = ${r.flops}`, data: curve, showLine: true, pointRadius: 0 },
      { label: "optima (N_opt, D_opt)", data: r.optima.map((o) => ({ x: Number(o.params), y: Number(o.tokens) })) },
      { label: "shapes", data: r.shapes.map((s) => ({ x: Number(s.params), y: Number(s.tokens) })) }] },
      options: { animation: false, maintainAspectRatio: false, scales: { x: { type: "logarithmic", title: { display: true, text: "parameters N" } }, y: { type: "logarithmic", title: { display: true, text: "tokens D" } } } } };
  },
  compare: (r) => bars("parameters (billions)", r.rows.map((row) => [row.model, row.params_total]), 1e9),
};
// the serving roofline: attainable FLOP/s = min(peak, intensity x HBM bandwidth), with the
// prefill and the first decode step at the rate the answer gives them (FLOPs / seconds)
function roofline(r) {
  const peak = r.peak_flops_per_second, bw = r.hbm_bytes_per_second, ridge = peak / bw;
  const xs = [0.1, ridge, Math.max(1e4, 10 * ridge)];
  const step = r.decode.first_step;
  return { type: "scatter", data: { datasets: [
    { label: `roofline: min(peak ${peak.toExponential(3)} FLOP/s, intensity × ${bw.toExponential(3)} B/s)`, data: xs.map((x) => ({ x, y: Math.min(peak, x * bw) })), showLine: true, pointRadius: 0 },
    { label: "prefill", data: [{ x: r.prefill.arithmetic_intensity_flops_per_byte, y: Number(r.prefill.flops) / r.prefill.seconds }], pointRadius: 6 },
    { label: "decode step (first)", data: [{ x: step.arithmetic_intensity_flops_per_byte, y: Number(step.flops) / step.seconds }], pointRadius: 6 }] },
    options: { animation: false, maintainAspectRatio: false, scales: { x: { type: "logarithmic", title: { display: true, text: "FLOPs per byte" } }, y: { type: "logarithmic", title: { display: true, text: "FLOP/s" } } } } };
}
function draw(config, second) {
  for (const c of [state.chart, state.chart2]) if (c) c.destroy();
  state.chart = config && window.Chart ? new window.Chart($("chart"), config) : null;
  state.chart2 = second && window.Chart ? new window.Chart($("chart2"), second) : null;
  $("chart2-box").hidden = !second;
}
async function serveChart(pairs) {
  const kept = pairs.filter(([k]) => k !== "batch");
  const points = [];
  for (const b of [1, 2, 4, 8, 16, 32, 64, 128]) {
    const res = await post("serve", kept.concat([["batch", String(b)]]));
    if (!res.ok) break;
    const r = (await res.json()).result;
    points.push({ x: r.latency.tpot_seconds * 1000, y: r.throughput.decode_tokens_per_second, batch: b });
  }
  return { type: "scatter", data: { datasets: [{ label: "decode tokens/s against time per output token (batch 1 to 128)", data: points, showLine: true }] },
    options: { animation: false, maintainAspectRatio: false, scales: { x: { title: { display: true, text: "TPOT (ms)" } }, y: { title: { display: true, text: "tokens/s" } } } } };
}

// ---- the form, the URL and the requests ----
function post(endpoint, pairs) {
  return fetch(`/api/${endpoint}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ pairs }) });
}
function buildForm(tab, values) {
  const form = $("options");
  form.replaceChildren();
  for (const spec of state.lists.options[tab]) {
    const label = document.createElement("label");
    label.title = spec.help;
    let input;
    if (spec.flag) {
      label.className = "flag";
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = values.has(spec.key) ? ["1", "true", "on"].includes(values.get(spec.key)) : spec.default;
    } else if (spec.choices || spec.key === "gpu" || spec.key === "like") {
      input = document.createElement("select");
      const names = spec.choices || (spec.key === "gpu" ? state.lists.gpus : state.lists.presets).map((g) => g.name);
      input.add(new Option(`(default${spec.default != null ? ": " + spec.default : ""})`, ""));
      for (const name of names) input.add(new Option(String(name), String(name)));
      input.value = values.get(spec.key) ?? "";
    } else {
      input = document.createElement("input");
      input.placeholder = spec.default != null ? String(spec.default) : "";
      input.value = values.get(spec.key) ?? INITIAL[tab]?.[spec.key] ?? "";
    }
    input.name = spec.key;
    input.dataset.default = String(spec.default);
    label.append(spec.key + " ", input);
    form.appendChild(label);
  }
}
function requestPairs() {
  const pairs = [];
  if (!NO_MODEL.has(state.tab)) {
    const text = $("config_text").value.trim();
    if (text) pairs.push(["config_text", text]);
    else pairs.push(["preset", $("preset").value]);
    if (state.tab === "compare") for (const o of $("compare_with").selectedOptions) pairs.push(["preset", o.value]);
    for (const line of $("set").value.split("\n").map((s) => s.trim()).filter(Boolean)) pairs.push(["set", line]);
  }
  for (const input of $("options").elements) {
    if (input.type === "checkbox") {
      if (String(input.checked) !== input.dataset.default) pairs.push([input.name, input.checked ? "1" : "0"]);
    } else if (input.value.trim() !== "") pairs.push([input.name, input.value.trim()]);
  }
  return pairs;
}
function pageUrl(pairs) {
  const q = new URLSearchParams([["tab", state.tab]]);
  if (!NO_MODEL.has(state.tab) && $("config_text").value.trim()) q.append("preset", $("preset").value);
  for (const [k, v] of pairs) q.append(k === "preset" && q.has("preset") ? "with" : k, v);
  return `${location.pathname}?${q}`;
}
function showError(message) {
  $("error").textContent = `Error: ${message}`;
  $("error").hidden = false;
  $("answer").hidden = true;
}
async function run() {
  const seq = ++state.seq;
  document.body.dataset.state = "busy";
  const pairs = requestPairs();
  const url = pageUrl(pairs);
  history.replaceState(null, "", url);
  $("permalink").href = url;
  const res = await post(state.tab, pairs);
  const body = await res.json();
  if (seq !== state.seq) return;
  if (!res.ok) { showError(body.error); document.body.dataset.state = "done"; return; }
  $("error").hidden = true;
  $("answer").hidden = false;
  const r = body.result;
  $("command").textContent = body.command;
  const blob = new Blob([JSON.stringify(r, null, 2)], { type: "application/json" });
  $("download").href = URL.createObjectURL(blob);
  $("download").download = `sizing-${state.tab}.json`;
  fillTable($("breakdown"), ["quantity", "value"], BREAKDOWN[state.tab](r));
  fillTable($("formulas"), ["quantity", "with your numbers", "formula"], FORMULAS[state.tab](r, body.formulas));
  fillTable($("all-numbers"), ["path", "value"], leaves(r, "", []));
  showVerdict(body.verdict, body.verdict_label, r);
  $("fit-gpus").textContent = "…";
  const second = CHARTS[state.tab] ? null : roofline(r);
  const first = CHARTS[state.tab] ? CHARTS[state.tab](r) : await serveChart(pairs);
  if (seq !== state.seq) return;
  draw(first, second);
  const fits = await (await fetch(`/api/fits/${state.tab}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ pairs }) })).json();
  if (seq !== state.seq) return;
  const names = Array.isArray(fits) ? fits.filter((g) => g.fits).map((g) => g.gpu) : [];
  $("fit-gpus").textContent = names.length ? names.join(", ") : "none of the listed GPUs";
  $("fit-gpus").dataset.gpus = JSON.stringify(names);
  document.body.dataset.state = "done";
}
function showVerdict(fits, label, r) {
  const v = $("verdict");
  v.dataset.fits = String(fits);
  const gpu = r.gpu || r.memory?.training?.gpu || r.rows?.[0]?.gpu || "";
  v.textContent = fits == null ? "No fit verdict for these settings."
    : `${fits ? "Fits" : "Does not fit"} on ${gpu}: ${label}.`;
}
function selectTab(tab, values) {
  state.tab = TABS.includes(tab) ? tab : "estimate";
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === state.tab);
  $("model-panel").hidden = NO_MODEL.has(state.tab);
  $("compare-with-label").hidden = state.tab !== "compare";
  $("options-title").textContent = `Options of sizing ${state.tab}`;
  buildForm(state.tab, values);
}
async function start() {
  state.lists = await (await fetch("/api/lists")).json();
  for (const p of state.lists.presets) { $("preset").add(new Option(p.name, p.name)); $("compare_with").add(new Option(p.name, p.name)); }
  const q = new URLSearchParams(location.search);
  $("preset").value = q.get("preset") || "llama2-7b";
  const others = new Set(q.getAll("with").concat(q.getAll("preset").slice(1)));
  for (const o of $("compare_with").options) o.selected = others.has(o.value);
  $("config_text").value = q.get("config_text") || "";
  $("set").value = q.getAll("set").join("\n");
  const values = new Map([...q.entries()].filter(([k]) => !["tab", "preset", "with", "set", "config_text"].includes(k)));
  selectTab(q.get("tab"), values);
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => { selectTab(b.dataset.tab, new Map()); run(); });
  $("run").addEventListener("click", run);
  for (const el of [$("preset"), $("compare_with"), $("options")]) el.addEventListener("change", run);
  await run();
}
document.addEventListener("DOMContentLoaded", start);
