// The preset and GPU browser: `sizing presets` and `sizing gpus` as tables (from /api/lists),
// filtered as you type; a preset's name button takes it to the model panel.
import { show } from "./format.js";

const $ = (id) => document.getElementById(id);

function table(node, header, rows, filter) {
  node.replaceChildren();
  const head = node.createTHead().insertRow();
  for (const h of header) { const th = document.createElement("th"); th.textContent = h; head.append(th); }
  const body = node.createTBody();
  for (const r of rows) {
    if (filter && !r.text.toLowerCase().includes(filter)) continue;
    const row = body.insertRow();
    row.dataset.name = r.name;
    for (const cell of r.cells) {
      const td = row.insertCell();
      if (cell instanceof Node) td.append(cell);
      else td.textContent = cell;
      if (typeof cell === "string" && /^[\d$.,]/.test(cell)) td.className = "num";
    }
  }
}

export function renderBrowse(lists, filter, pick) {
  const text = filter.trim().toLowerCase();
  const presets = [
    ...lists.presets.map((p) => ({ ...p, kind: "model", count: p.params, active: p.active })),
    ...lists.hybrid_presets.map((p) => ({ ...p, family: "hybrid SSM", kind: "hybrid", count: p.published_params })),
    ...lists.vision_presets.map((p) => ({ ...p, family: "vision-language", kind: "vision", count: p.published_params })),
  ];
  table($("preset-table"), ["preset", "family", "parameters", "active", "context (tokens)", "training tokens", "source"],
    presets.map((p) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "link";
      button.textContent = p.name;
      button.addEventListener("click", () => pick(p.name, p.kind));
      return { name: p.name, text: `${p.name} ${p.family} ${p.source}`,
        cells: [button, p.family, show(p.count, "params"), p.active != null ? show(p.active, "params") : "",
          p.context ? show(p.context, "number") : "", p.training_tokens ? show(p.training_tokens, "tokens") : "", p.source] };
    }), text);
  table($("gpu-table"), ["GPU", "name", "bf16 TFLOP/s", "fp8 TFLOP/s", "memory", "HBM TB/s", "NVLink GB/s", "network GB/s"],
    lists.gpus.map((g) => ({ name: g.name, text: `${g.name} ${g.gpu}`,
      cells: [g.name, g.gpu, String(g.peak_tflops.bf16 ?? g.peak_tflops.fp16 ?? "–"), String(g.peak_tflops.fp8 ?? "–"),
        show(g.memory_bytes, "bytes"), String(g.bandwidth_tbs), String(g.nvlink_gbs ?? "–"), String(g.network_gbs ?? "–")] })), text);
}
