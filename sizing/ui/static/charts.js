// The charts of each answer (Chart.js, vendored): axes and labels in words and human units, a
// legend entry for every reference line. The serving roofline is per GPU: the prefill and the
// first decode step are drawn at their FLOPs / seconds divided by the GPUs of one replica, against
// one GPU's peak and bandwidth.
import { show, si, sig, tick } from "./format.js";
import { colour, fieldOf } from "./answer.js";
import { get } from "./tabs.js";

const base = () => ({ animation: false, maintainAspectRatio: false, responsive: true,
  plugins: { legend: { labels: { boxWidth: 12, usePointStyle: true } } } });
function axis(title, unit, log = false) {
  return { type: log ? "logarithmic" : "linear", title: { display: true, text: title }, ticks: { callback: tick(unit, log), autoSkip: true, maxRotation: 0 } };
}
const GIB = 2 ** 30;
// horizontal bars: one per (label, value) row, the value axis in `unit` (bytes drawn in GiB, so
// that the axis steps are round numbers of GiB)
function bars(title, rows, unit) {
  const scale = unit === "bytes" ? GIB : 1;
  const x = unit === "bytes" ? { ...axis(`${title} (GiB)`, "number"), ticks: { callback: (v) => `${sig(v)} GiB`, maxRotation: 0 } } : axis(title, unit);
  return { type: "bar", data: { labels: rows.map(([k]) => k), datasets: [{ label: title, data: rows.map(([, v]) => Number(v) / scale),
    backgroundColor: rows.map((_, i) => colour(i)) }] },
    options: { ...base(), indexAxis: "y", plugins: { legend: { display: false }, title: { display: true, text: title },
      tooltip: { callbacks: { label: (c) => `${c.label}: ${show(c.parsed.x * scale, unit)}` } } },
    scales: { x, y: { ticks: { autoSkip: false } } } } };
}
// a section's numbers as (words below the section, value) rows: params.components.attn.q -> "attention Q"
const section = (r, fields, path, skip = []) => Object.entries(get(r, path) || {})
  .filter(([k, v]) => !skip.includes(k) && v !== null && typeof v !== "object" && Number(v) > 0)
  .map(([k, v]) => [fieldOf(fields, `${path}.${k}`).label.split(" › ").slice(path.split(".").length).join(" ") || k, v]);

function serveRoofline(r) {
  const peak = r.peak_flops_per_second, bw = r.hbm_bytes_per_second, ridge = peak / bw;
  const perReplica = r.settings.gpus / r.settings.replicas; // tensor- (and pipeline-) parallel GPUs of one replica
  const xs = [0.1, ridge, Math.max(1e4, 10 * ridge)];
  const step = r.decode.first_step;
  const point = (flops, seconds, intensity) => [{ x: intensity, y: Number(flops) / seconds / perReplica }];
  return { type: "scatter", data: { datasets: [
    { label: `roofline of one ${r.gpu}: ${si(peak)}FLOP/s peak, ${si(bw)}B/s HBM`,
      data: xs.map((x) => ({ x, y: Math.min(peak, x * bw) })), showLine: true, pointRadius: 0, borderColor: "#1b1f24" },
    { label: `ridge point: ${sig(ridge)} FLOPs per byte`, data: [{ x: ridge, y: peak }], pointStyle: "triangle", pointRadius: 7, backgroundColor: "#4a5360" },
    { label: `prefill, per GPU (of ${perReplica})`, data: point(r.prefill.flops, r.prefill.seconds, r.prefill.arithmetic_intensity_flops_per_byte), pointRadius: 6, backgroundColor: colour(0) },
    { label: `first decode step, per GPU (of ${perReplica})`, data: point(step.flops, step.seconds, step.arithmetic_intensity_flops_per_byte), pointRadius: 6, backgroundColor: colour(4) }] },
    options: { ...base(), plugins: { title: { display: true, text: "Roofline per GPU" } },
      scales: { x: axis("FLOPs per byte moved", "number", true), y: axis("FLOP/s per GPU", "number", true) } } };
}
async function serveCurve(r, pairs, post, signal) {
  const kept = pairs.filter(([k]) => k !== "batch");
  const points = [];
  for (const b of [1, 2, 4, 8, 16, 32, 64, 128]) {
    const res = await post("serve", kept.concat([["batch", String(b)]]), signal);
    if (!res.ok) break;
    const x = (await res.json()).result;
    points.push({ x: x.latency.tpot_seconds, y: x.throughput.decode_tokens_per_second, batch: b });
  }
  return { type: "scatter", data: { datasets: [{ label: "decode tokens/s at batch 1 to 128", data: points, showLine: true, backgroundColor: colour(0), borderColor: colour(0) }] },
    options: { ...base(), plugins: { title: { display: true, text: "Throughput against latency" },
      tooltip: { callbacks: { label: (c) => `batch ${c.raw.batch}: ${show(c.raw.y, "tokens_per_second")} at ${show(c.raw.x, "seconds")} per token` } } },
    scales: { x: axis("time per output token", "seconds"), y: axis("decode tokens/s", "number") } } };
}
function planChart(r) {
  const ns = r.optima.map((o) => Number(o.params));
  const lo = Math.min(...ns) / 4, hi = Math.max(...ns) * 4, C = Number(r.flops);
  const curve = Array.from({ length: 25 }, (_, i) => lo * (hi / lo) ** (i / 24)).map((n) => ({ x: n, y: C / (6 * n) }));
  return { type: "scatter", data: { datasets: [
    { label: `iso-FLOP line D = C / (6N), C = ${show(C, "flops")}`, data: curve, showLine: true, pointRadius: 0, borderColor: "#1b1f24" },
    ...r.optima.map((o, i) => ({ label: `optimum: ${o.name}`, data: [{ x: Number(o.params), y: Number(o.tokens) }], pointRadius: 6, backgroundColor: colour(i) })),
    ...r.shapes.map((s, i) => ({ label: `shape ${s.label}`, data: [{ x: Number(s.params), y: Number(s.tokens) }], pointStyle: "rectRot", pointRadius: 7, backgroundColor: colour(i + 6) }))] },
    options: { ...base(), tall: true, plugins: { title: { display: true, text: "Compute-optimal size and tokens" },
      legend: { position: "bottom", labels: { boxWidth: 10, font: { size: 11 } } } },
      scales: { x: axis("parameters N", "params", true), y: axis("training tokens D", "tokens", true) } } };
}
// a sweep point by its grid values, each in its unit ("layers 24, tokens 1 T")
const rowLabel = (row, keys, fields, i) => keys.map((k) => {
  const f = fieldOf(fields, `rows.${i}.${k}`);
  return `${f.label.split(" › ").pop()} ${show(row[k], f.unit)}`;
}).join(", ");

// [config, ...] for an answer (async: serve asks for its curve)
export async function chartsFor(tab, r, fields, pairs, post, signal) {
  switch (tab) {
    case "estimate": return [bars("parameters by component", section(r, fields, "params.components"), "params"),
      bars("forward FLOPs per token by component", section(r, fields, "flops.components"), "flops")];
    case "memory": return r.step?.seconds ? [bars("step time by part", section(r, fields, "step.seconds"), "seconds")] : [];
    case "parallel": return [bars("step time by part", section(r, fields, "step.seconds"), "seconds")];
    case "serve":
      if ("rate_requests_per_second" in r) return r.layouts.length ? [bars("$ per million output tokens by layout",
        r.layouts.slice(0, 12).map((l) => [`tp ${l.tp} pp ${l.pp} ${l.weight_dtype}/${l.kv_dtype} ×${l.replicas}`, l.usd_per_million_output_tokens]), "usd")] : [];
      return [await serveCurve(r, pairs, post, signal), serveRoofline(r)];
    case "plan": return r.optima.length ? [planChart(r)] : [];
    case "compare": return [bars("GPU-hours", r.rows.map((row) => [row.model, row.gpu_hours]), "hours"),
      bars("parameters", r.rows.map((row) => [row.model, row.params_total]), "params")];
    case "sweep": {
      const axes = Object.keys(r.grid || {}).filter((k) => r.rows.length && r.rows[0][k] !== undefined && String(r.grid[k]).includes(","));
      return r.rows.length ? [bars("GPU-hours per point", r.rows.map((row, i) => [rowLabel(row, axes, fields, i), row.gpu_hours]), "hours")] : [];
    }
    case "hybrid": return [bars("inference memory: this model against all attention", [
      [`${r.name} (hybrid)`, r.memory_bytes.total], ["same shape, all attention", r.memory_bytes.all_attention_total],
      ...(r.fit ? [[`GPU memory (${r.fit.gpu})`, r.fit.gpu_memory_bytes]] : [])], "bytes")];
    case "vision": return [bars("parameters by part", section(r, fields, "params", ["total"]), "params"),
      bars("prefill FLOPs", [["text tokens", r.text_forward_flops], ["image encoder", r.image_encoder_flops]], "flops")];
    case "speculate": return [bars("time per output token", [["plain decoding (one target step)", r.target_step_seconds],
      ["speculative", r.seconds_per_token]], "seconds")];
    case "serve-layout": return [bars("tokens/s per GPU by layout", r.layouts.map((l) => [`${l.layout} on ${l.gpus}`, l.tokens_per_second_per_gpu]), "tokens_per_second")];
    default: return [];
  }
}
