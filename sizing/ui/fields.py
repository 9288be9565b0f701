"""Words and units for the keys of an answer's JSON, so that the page labels every number in
words ("Per GPU › activations (blocks)") with the key shown small beside it, and formats it in
its unit (GiB for bytes, ms for seconds, 6.74 B for parameters) instead of printing raw digits.

The unit is read off the key's name, which follows the project's convention of units in names
(`*_bytes`, `*_seconds`, `*_flops`, `gpu_hours`, `cost_usd`, ...); a key that names no unit is a
plain number. Nothing here changes a value: the page formats the exact JSON value it was sent.
"""

from __future__ import annotations

import re

# Words for the abbreviations the JSON keys use (each segment of a dotted path is looked up
# whole, then word by word).
WORDS = {
    "attn": "attention", "mlp": "MLP", "tok_emb": "token embedding", "pos_emb": "position embedding",
    "lm_head": "LM head", "norm_f": "final norm", "q": "Q", "k": "K", "v": "V", "o": "output projection",
    "kv": "KV", "ssm": "SSM", "moe": "MoE", "mla": "MLA", "mfu": "MFU", "hfu": "HFU", "gpu": "GPU", "gpus": "GPUs",
    "usd": "$", "tp": "tensor parallel", "pp": "pipeline", "dp": "data parallel", "cp": "context parallel",
    "ep": "expert parallel", "ttft": "time to first token", "tpot": "time per output token", "slo": "SLO",
    "hbm": "HBM", "nvlink": "NVLink", "zero": "ZeRO", "fsdp": "FSDP", "lora": "LoRA", "qlora": "QLoRA",
    "fp32": "fp32", "av": "attention × V", "fwd": "forward", "bwd": "backward", "6n": "6N", "kwh": "kWh",
    "tco2eq": "tCO2eq", "pue": "PUE", "llm": "LLM", "id": "ID", "hf": "Hugging Face", "co2": "CO2",
    "per_gpu": "per GPU", "num_gpus": "GPUs", "d_model": "width (d_model)", "n_layers": "layers",
    "n_heads": "heads", "n_kv_heads": "KV heads", "d_ff": "MLP width (d_ff)", "seq_len": "sequence length",
    "rstd": "1/rms", "flops": "FLOPs", "params": "parameters", "gpu_hours": "GPU-hours",
    "wall_clock_days": "days (wall clock)", "energy": "energy",
    "usd_per_million_output_tokens": "$ per million output tokens",
    "usd_per_million_input_tokens": "$ per million input tokens", "logsumexp": "log-sum-exp", "gemm": "matmuls",
    "a_log": "A (log)", "dt_proj": "Δ projection",
}  # fmt: skip
# The unit a key names (searched in the last key, in order; the first that matches wins).
UNIT_PATTERNS = tuple(
    (re.compile(pattern), name)
    for pattern, name in (
        (r"^(seq_len|context|batch|micro_batch|global_batch|num_gpus|gpus|replicas|count|steps|chunk)$", "number"),
        (r"usd|^price", "usd"),
        (r"per_byte$|bytes_per_param", "number"),
        (r"tokens_per_second", "tokens_per_second"),
        (r"per_second", "per_second"),
        (r"bytes", "bytes"),
        (r"seconds", "seconds"),
        (r"gpu_hours", "hours"),
        (r"days", "days"),
        (r"kwh", "kwh"),
        (r"tco2eq", "tco2"),
        (r"flops", "flops"),
        (r"tokens_per_param", "number"),
        (r"params", "params"),
        (r"tokens", "tokens"),
        (r"^(mfu|hfu)|_mfu|efficiency|acceptance$|duty|utilization", "ratio"),
    )
)
# Sections whose numbers all carry one unit (params.components.attn.q is parameters), nearest first.
SECTION_UNITS = {
    "params": "params", "per_layer": "params", "memory_bytes": "bytes", "seconds": "seconds", "per_gpu": "bytes",
    "activation_terms": "bytes",
}  # fmt: skip
_INDEX = re.compile(r"^\d+$")


def words(segment: str) -> str:
    """One key in words: 'activations_blocks_bytes' -> 'activations blocks'."""
    if segment in WORDS:
        return WORDS[segment]
    if _INDEX.match(segment):
        return f"#{int(segment) + 1}"
    stem = re.sub(r"_(bytes|seconds|kwh)$|^cost_usd$", lambda m: "" if m.group(1) else "cost", segment)
    if stem in WORDS:
        return WORDS[stem]
    return " ".join(WORDS.get(part, part) for part in re.split(r"[_.]", stem) if part)


def unit(path: str) -> str:
    """The unit of the value at a dotted path: from the last key's name, else its section's
    (FLOPs per token in `flops`, except its counts)."""
    parts = path.split(".")
    last = parts[-1].lower()
    for pattern, name in UNIT_PATTERNS:
        if pattern.search(last):
            return name
    for part in reversed(parts[:-1]):
        if part in SECTION_UNITS:
            return SECTION_UNITS[part]
    if "flops" in parts[:-1] and (last.endswith("per_token") or "components" in parts):
        return "flops"
    return "number"


def label(path: str) -> str:
    """A dotted path in words, sections joined by ' › ', first letter capital."""
    text = " › ".join(words(part) for part in path.split("."))
    return text[:1].upper() + text[1:]


def leaves(value, prefix: str = "") -> list[tuple[str, object]]:
    """(dotted path, scalar) for every leaf of a JSON value, in order (the page's table rows)."""
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return [(prefix, value)]
    out = []
    for key, item in items:
        out += leaves(item, f"{prefix}.{key}" if prefix else str(key))
    return out


def fields(result) -> dict[str, dict[str, str]]:
    """{path: {label, unit}} for every leaf of an answer."""
    return {path: {"label": label(path), "unit": unit(path)} for path, _ in leaves(result)}
