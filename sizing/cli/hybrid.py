"""`sizing hybrid`: a hybrid state-space / linear-attention model (Mamba-2, Jamba, Nemotron-H,
Bamba, Qwen3-Next): parameters by component, its layer pattern, FLOPs per token, and inference
memory at a context: the KV cache of its attention layers, the fixed recurrent state of the
others, beside an all-attention model of the same shape."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.inputs import GIB, format_int

EXIT_DOES_NOT_FIT = 3  # as `sizing memory` and `sizing parallel`: not even one sequence fits
NOT_MODELLED = "training activation memory of the state mixers (inference memory and FLOPs are modelled)"


def _load(preset: str | None, config_path: str | None):
    from sizing.hybrid import HYBRID_PRESETS, hybrid_preset

    names = [p.name for p in HYBRID_PRESETS]
    if (preset is None) == (config_path is None):
        raise UserError(f"give one of --preset ({', '.join(names)}) or --config (an HF config.json)")
    if preset is not None:
        try:
            return hybrid_preset(preset).model(), hybrid_preset(preset)
        except KeyError:
            raise UserError(f"--preset ({preset!r}) is not a hybrid preset; valid: {', '.join(names)}") from None
    from sizing.hybrid import hybrid_from_hf_config
    from sizing.inputs.hf import load_family_config

    return load_family_config(config_path, hybrid_from_hf_config), None


def _fit(m, gpu: str, context: int, batch: int, weight_dtype: str, kv_dtype: str, ssm_dtype: str) -> dict:
    from sizing.hybrid import all_attention_kv_bytes, max_batch, max_context, total_params
    from sizing.inputs import get_gpu
    from sizing.memory import dtype_bytes

    capacity = get_gpu(gpu).memory_bytes
    free = capacity - dtype_bytes(total_params(m), weight_dtype)
    return {
        "gpu": gpu,
        "gpu_memory_bytes": capacity,
        "max_batch_at_context": max_batch(m, context, capacity, weight_dtype, kv_dtype, ssm_dtype),
        "max_context_at_batch": max_context(m, batch, capacity, weight_dtype, kv_dtype, ssm_dtype),
        "all_attention_max_batch_at_context": max(0, free // all_attention_kv_bytes(m, context, 1, kv_dtype)),
    }


def hybrid_summary(m, context: int, batch: int, weight_dtype: str, kv_dtype: str, ssm_dtype: str) -> dict:
    from sizing.hybrid import hybrid_inference_memory
    from sizing.hybrid import model as M

    mem = hybrid_inference_memory(m, context, batch, weight_dtype, kv_dtype, ssm_dtype)
    return {
        "name": m.name,
        "mixer": m.mixer.kind if m.mixer else None,
        "layers": {
            "total": m.count(),
            "attention": m.count(mixer="attention"),
            "state": m.count(mixer="mamba"),
            "moe": m.count(mlp="moe"),
            "dense_mlp": m.count(mlp="dense"),
        },
        "pattern": m.pattern,
        "params": M.param_components(m),
        "total_params": M.total_params(m),
        "active_params": M.active_params(m),
        "prefill_flops_per_token": M.prefill_flops(m, context) // context,
        "decode_flops_per_token": M.decode_flops_per_token(m, context),
        "attention_convention": "full",
        "not_modelled": [NOT_MODELLED],
        "context": context,
        "batch": batch,
        "dtypes": {"weights": weight_dtype, "kv": kv_dtype, "conv_state": weight_dtype, "ssm_state": ssm_dtype},
        "memory_bytes": {
            "weights": mem.weights_bytes,
            "kv_cache": mem.kv_cache_bytes,
            "conv_state": mem.conv_state_bytes,
            "ssm_state": mem.ssm_state_bytes,
            "total": mem.total_bytes,
            "all_attention_kv_cache": mem.all_attention_kv_bytes,
            "all_attention_total": mem.all_attention_total_bytes,
        },
    }


def _render(s: dict, preset) -> str:
    from sizing.render import table

    lines = [
        f"{s['name']}: {s['layers']['total']} layers, {s['layers']['attention']} attention, "
        f"{s['layers']['state']} {s['mixer'] or 'state'}, {s['layers']['moe']} MoE"
    ]
    rows = [[k, format_int(v)] for k, v in s["params"].items()]
    rows.append(["total", format_int(s["total_params"])])
    rows.append(["active", format_int(s["active_params"])])
    lines.append(table(["component", "params"], rows))
    if preset is not None:
        lines.append(f"published: {preset.published_total:.3g} ({preset.source})")
    if "fit" in s:
        f = s["fit"]
        longest = (
            "unbounded (no attention layer)" if f["max_context_at_batch"] is None else f"{f['max_context_at_batch']:,}"
        )
        lines.append(
            f"\none {f['gpu']} ({f['gpu_memory_bytes'] / GIB:.1f} GiB): "
            f"batch of {s['context']:,}-token sequences that fits "
            f"{f['max_batch_at_context']} (all-attention shape: {f['all_attention_max_batch_at_context']}); "
            f"longest context at batch {s['batch']}: {longest}"
        )
    mb = s["memory_bytes"]
    gib = lambda b: f"{b / GIB:.2f}"  # noqa: E731
    lines.append(f"\ninference memory, context {s['context']:,}, batch {s['batch']} (GiB):")
    mem_rows = [
        ["weights", gib(mb["weights"]), gib(mb["weights"])],
        ["KV cache", gib(mb["kv_cache"]), gib(mb["all_attention_kv_cache"])],
        ["conv state", gib(mb["conv_state"]), "0.00"],
        ["SSM state", gib(mb["ssm_state"]), "0.00"],
        ["total", gib(mb["total"]), gib(mb["all_attention_total"])],
    ]
    lines.append(table(["part", "this model", "all-attention, same shape"], mem_rows))
    lines.append(
        f"\nFLOPs per token: prefill {s['prefill_flops_per_token']:.4g} (attention full, chunked scan), "
        f"decode {s['decode_flops_per_token']:.4g} (recurrent step)"
    )
    lines.append(f"not modelled: {NOT_MODELLED}")
    return "\n".join(lines)


@click.command()
@option("preset", help="A hybrid preset (sizing hybrid --preset x lists them).", names="hybrid_presets")
@option("config", help="A hybrid model's Hugging Face config.json, its directory or a hub id. Never executes code.")
@option("context", default=4096, help="Context length (tokens).")
@option("batch", default=1)
@option("weight_dtype", default="bf16")
@option("kv_dtype", default="bf16")
@option("ssm_dtype")
@option("gpu", help="Also the largest batch and context that fit on one GPU (see `sizing gpus`).")
@option("format")
def hybrid(preset, config_path, context, batch, weight_dtype, kv_dtype, ssm_dtype, gpu, fmt):
    """A hybrid SSM / linear-attention model: parameters, layer pattern, FLOPs, and memory
    against context beside an all-attention model of the same shape. With --gpu: exit code 0
    when a batch of --context tokens fits on it, 3 when not even one sequence does, 2 on bad input.

    \b
    Examples:
      sizing hybrid --preset jamba-v0.1 --context 262144 --gpu h100
      sizing hybrid --config nemotron-h-8b/config.json --context 128K --batch 8 --format json
    """
    m, p = _load(preset, config_path)
    s = hybrid_summary(m, context, batch, weight_dtype, kv_dtype, ssm_dtype)
    if gpu is not None:
        s["fit"] = _fit(m, gpu, context, batch, weight_dtype, kv_dtype, ssm_dtype)
    if fmt == "json":
        import json

        click.echo(json.dumps(s, indent=2, allow_nan=False))
    else:
        click.echo(_render(s, p))
    if gpu is not None and s["fit"]["max_batch_at_context"] < 1:
        raise SystemExit(EXIT_DOES_NOT_FIT)
