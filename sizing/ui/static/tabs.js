// What each question's answer shows below its cards: the breakdown (sections of its JSON, one
// row per number), a table of its rows where the answer is a list (compare, sweep, layouts,
// shapes), and the formulas with the user's numbers. Paths are the JSON's; words and units come
// with the answer (sizing/ui/fields.py).
import { show } from "./format.js";

export function get(obj, path) { return path.split(".").reduce((o, k) => (o == null ? o : o[k]), obj); }
export function leaves(obj, prefix = "", out = []) {
  if (obj !== null && typeof obj === "object") {
    const entries = Array.isArray(obj) ? obj.map((v, i) => [String(i), v]) : Object.entries(obj);
    for (const [k, v] of entries) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.push([prefix, obj]);
  return out;
}
// the rows of several paths: a section's leaves, or one value
function pick(r, paths) {
  const rows = [];
  for (const path of paths) {
    const value = get(r, path);
    if (value === undefined) continue;
    if (value !== null && typeof value === "object") rows.push(...leaves(value, path));
    else rows.push([path, value]);
  }
  return rows.filter(([p, v]) => typeof v !== "string" || /^-?\d+$/.test(v) || !p.endsWith("formula"));
}
const topLevel = (r) => Object.keys(r).filter((k) => r[k] === null || typeof r[k] !== "object");

const memoryKind = (r) => ("terms" in r ? "engine" : "kv_cache_bytes" in r ? "inference" : "layout" in r ? "plan" : "training");
const PLAN_PATHS = ["per_gpu", "per_gpu_bytes", "runtime_reserve_bytes", "gpu_memory_bytes", "headroom_bytes",
  "step.seconds", "step_seconds", "mfu", "step.tokens_per_second_per_gpu", "global_batch", "tokens", "gpu_hours", "wall_clock_days"];

export const BREAKDOWN = {
  estimate: (r) => pick(r, ["params.components", "params.total", "flops.components", "flops.training_per_token",
    ...["tokens", "flops", "gpu_hours", "wall_clock_days", "cost_usd", "energy_kwh", "tco2eq", "mfu"].map((k) => `training.${k}`)]),
  memory: (r) => ({
    engine: () => pick(r, ["kv_budget_bytes", "kv_bytes_per_token", "num_blocks", "kv_tokens", "max_running_requests", "cuda_graph_bytes", "outside_budget_bytes"]),
    inference: () => pick(r, ["weights_bytes", "kv_cache_bytes", "prefill_peak_bytes", "peak_bytes", "runtime_reserve_bytes",
      "gpu_memory_bytes", "headroom_bytes", "max_batch", "max_context"]),
    plan: () => pick(r, PLAN_PATHS),
    training: () => pick(r, ["per_gpu", "runtime_reserve_bytes", "gpu_memory_bytes", "headroom_bytes", "max_micro_batch",
      "activations_per_layer_bytes", "model_states_bytes_per_param"]),
  })[memoryKind(r)](),
  parallel: (r) => pick(r, PLAN_PATHS),
  serve: (r) => ("rate_requests_per_second" in r ? pick(r, ["best", "requests"]) : pick(r, ["latency", "throughput", "cost", "memory"])),
  plan: (r) => pick(r, ["flops", "num_gpus", "mfu"]),
  compare: () => [],
  sweep: () => [],
  hybrid: (r) => pick(r, ["memory_bytes", "fit", "params", "total_params", "active_params", "prefill_flops_per_token",
    "decode_flops_per_token", "layers"]),
  vision: (r) => pick(r, ["params", "components", "image_tokens_per_image", "sequence_tokens", "flops_per_image",
    "text_forward_flops", "image_encoder_flops", "prefill_flops"]),
  speculate: (r) => pick(r, topLevel(r)),
  "serve-layout": () => [],
};

// [rows, columns, JSON prefix] of the table of a list answer, or null
export const ROWS = {
  estimate: () => null,
  memory: (r) => (memoryKind(r) === "engine" ? [r.terms, ["name", "bytes", "formula"], "terms"] : null),
  parallel: (r) => [r.collectives, ["dimension", "collective", "what", "count", "bytes_per_step", "link", "seconds_per_step"], "collectives"],
  serve: (r) => ("rate_requests_per_second" in r
    ? (r.layouts.length
      ? [r.layouts, ["tp", "pp", "weight_dtype", "kv_dtype", "replicas", "gpus", "usd_per_million_output_tokens",
        "max_requests_per_second_per_replica", "binding"], "layouts"]
      : [r.rejected, ["tp", "pp", "weight_dtype", "kv_dtype", "why_not"], "rejected"])
    : null),
  plan: (r) => [r.shapes, ["label", "d_model", "n_layers", "n_heads", "params", "tokens", "gpu_hours", "days", "fits"], "shapes"],
  compare: (r) => [r.rows, ["model", "params_total", "params_active", "seq_len", "training_flops", "gpu_hours", "days",
    "cost_usd", "inference_memory_bytes", "training_memory_bytes", "training_fits"], "rows"],
  sweep: (r) => [r.rows, Object.keys(r.rows[0] || {}).filter((k) => !["params_non_embedding", "flops_6n_per_token"].includes(k)), "rows"],
  hybrid: () => null,
  vision: () => null,
  speculate: () => null,
  "serve-layout": (r) => [r.layouts, ["layout", "gpus", "batch", "memory_bytes_per_gpu", "step_seconds", "tpot_seconds",
    "tokens_per_second_per_gpu"], "layouts"],
};

// formulas with the user's numbers: [quantity, numbers plugged in, formula]
function sumLine(label, parts, total, unit = "number") {
  return [label, `${parts.map(([, v]) => show(v, unit)).join(" + ")} = ${show(total, unit)}`, parts.map(([k]) => k).join(" + ")];
}
const STEP = "max(FLOPs / (peak·eff), bytes / (bandwidth·eff)) + TP all-reduce + overhead";
export const FORMULAS = {
  estimate: (r, f) => [
    ...Object.entries(f.params || {}).map(([k, x]) => [`parameters ${k}`, `${x.plugged} = ${show(x.per_layer ?? x.value)}${x.per_layer != null ? " per layer" : ""}`, x.formula]),
    ...Object.entries(f.flops || {}).map(([k, x]) => [`FLOPs/token ${k}`, `${x.plugged} = ${show(x.value)}`, x.formula])],
  memory: (r) => ({
    training: () => [sumLine("bytes per GPU", Object.entries(r.per_gpu).filter(([k]) => k !== "total_bytes"), r.per_gpu.total_bytes, "bytes")],
    inference: () => [["KV cache", `${r.kv_cache_formula} = ${show(r.kv_cache_bytes, "bytes")}`, "2·L·h_kv·d_h·bytes·positions·batch"],
      sumLine("peak", [["weights", r.weights_bytes], ["KV cache", r.kv_cache_bytes], ["prefill peak", r.prefill_peak_bytes]], r.peak_bytes, "bytes")],
    engine: () => r.terms.map((t) => [t.name, `${t.formula} = ${show(t.bytes, "bytes")}`, t.source]),
    plan: () => FORMULAS.parallel(r),
  })[memoryKind(r)](),
  parallel: (r) => [sumLine("bytes on the most-loaded GPU", Object.entries(r.per_gpu)
    .filter(([k]) => !k.endsWith("total_bytes") && !k.startsWith("cpu_")), r.per_gpu.total_bytes, "bytes")],
  serve: (r) => (r.prefill ? [
    ["prefill", `max(${show(r.prefill.compute_seconds, "seconds")}, ${show(r.prefill.memory_seconds, "seconds")}) + ${show(r.prefill.tp_allreduce_seconds, "seconds")} + ${show(r.prefill.step_overhead_seconds, "seconds")} = ${show(r.prefill.seconds, "seconds")}`, STEP],
    ["decode step (first)", `max(${show(r.decode.first_step.compute_seconds, "seconds")}, ${show(r.decode.first_step.memory_seconds, "seconds")}) + ${show(r.decode.first_step.tp_allreduce_seconds, "seconds")} + ${show(r.decode.first_step.step_overhead_seconds, "seconds")} = ${show(r.decode.first_step.seconds, "seconds")}`, STEP],
    sumLine("bytes per GPU", [["weights", r.memory.weights_bytes_per_gpu], ["KV", r.memory.kv_bytes_per_gpu], ["prefill peak", r.memory.prefill_peak_bytes]], r.memory.total_bytes_per_gpu, "bytes")] : []),
  plan: (r) => r.optima.map((o) => [o.name, `${show(o.params, "params")} parameters · ${show(o.tokens, "tokens")} tokens`, r.convention]),
  compare: (r) => r.rows.map((row) => [row.model, `${show(row.training_flops_per_token, "flops")} × ${show(row.tokens, "tokens")} = ${show(row.training_flops, "flops")}`, "training FLOPs = FLOPs/token × tokens"]),
  sweep: () => [],
  hybrid: (r) => [sumLine("inference memory", ["weights", "kv_cache", "conv_state", "ssm_state"].map((k) => [k, r.memory_bytes[k]]), r.memory_bytes.total, "bytes")],
  vision: (r) => [sumLine("parameters", ["language_model", "vision_tower", "projector"].map((k) => [k, r.params[k]]), r.params.total, "params"),
    sumLine("prefill FLOPs", [["text", r.text_forward_flops], ["images", r.image_encoder_flops]], r.prefill_flops, "flops")],
  speculate: (r) => [["tokens per target step", `(1 − ${r.acceptance}^${r.k + 1}) / (1 − ${r.acceptance}) = ${show(r.tokens_per_step)}`, "E = (1 − a^(k+1)) / (1 − a) (Leviathan et al. 2023)"]],
  "serve-layout": () => [],
};
