"""Regenerate tests/fixtures/hf_counts_hybrid.json: parameter counts of the hybrid presets as
Hugging Face's own modeling code builds them, and the recurrent-state bytes its cache holds.
A developer tool, never imported by the project or its tests; transformers is not a dependency:

    python -m venv --system-site-packages /tmp/hfenv && /tmp/hfenv/bin/pip install transformers
    /tmp/hfenv/bin/python tools/hf_counts_hybrid.py

For each preset of sizing.hybrid.presets it builds
AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **hf_config)) on the meta device
and records `total` (sum of numel over model.parameters(), tied weights once) and
`routed_expert_params` (every tensor under an `experts` module). Then, for a small config of
each family (tiny widths, the same code), it runs one forward of batch 1 with a cache and
records the bytes of every conv and recurrent state tensor in the cache (`state_bytes`), with
the model in bfloat16.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sizing.hybrid.presets import HYBRID_PRESETS  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "hf_counts_hybrid.json"
_EXPERTS = re.compile(r"^model\.layers\.(\d+)\.[a-z_]+\.experts\.")

# Small configs of each family for the cache measurement (a forward on CPU).
TINY = {
    "mamba2": dict(
        model_type="mamba2",
        hidden_size=64,
        num_hidden_layers=2,
        num_heads=4,
        head_dim=32,
        state_size=16,
        n_groups=2,
        expand=2,
        vocab_size=128,
        chunk_size=8,
    ),
    "jamba": dict(
        model_type="jamba",
        hidden_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=96,
        num_experts=4,
        num_experts_per_tok=2,
        attn_layer_period=4,
        attn_layer_offset=1,
        expert_layer_period=2,
        expert_layer_offset=1,
        mamba_d_state=8,
        mamba_dt_rank=8,
        vocab_size=128,
    ),
    "nemotron_h": dict(
        model_type="nemotron_h",
        hidden_size=64,
        num_hidden_layers=4,
        hybrid_override_pattern="M-*-",
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=96,
        mamba_num_heads=4,
        mamba_head_dim=32,
        ssm_state_size=16,
        n_groups=2,
        vocab_size=128,
        chunk_size=8,
    ),
    "bamba": dict(
        model_type="bamba",
        hidden_size=64,
        num_hidden_layers=3,
        attn_layer_indices=[1],
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=96,
        mamba_n_heads=4,
        mamba_d_head=32,
        mamba_n_groups=2,
        mamba_d_state=16,
        vocab_size=128,
        mamba_chunk_size=8,
    ),
    "falcon_h1": dict(
        model_type="falcon_h1",
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=96,
        mamba_d_ssm=128,
        mamba_n_heads=4,
        mamba_d_head=32,
        mamba_n_groups=2,
        mamba_d_state=16,
        mamba_chunk_size=8,
        vocab_size=128,
    ),
    "qwen3_next": dict(
        model_type="qwen3_next",
        hidden_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=96,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=32,
        num_experts=4,
        num_experts_per_tok=2,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        linear_key_head_dim=16,
        linear_value_head_dim=24,
        vocab_size=128,
    ),
}


def _build(config: dict):
    config = dict(config)
    model_type = config.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **config)
    return cfg, AutoModelForCausalLM.from_config(cfg)


def count(config: dict) -> dict:
    with torch.device("meta"):
        _, model = _build(config)
    total = sum(p.numel() for p in model.parameters())
    routed = sum(p.numel() for n, p in model.named_parameters() if _EXPERTS.match(n))
    return {"class": type(model).__name__, "total": total, "routed_expert_params": routed}


def _tensors(obj, seen):
    if isinstance(obj, torch.Tensor):
        if id(obj) not in seen:
            seen.add(id(obj))
            yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v, seen)


def state_bytes(config: dict, seq_len: int = 12) -> dict:
    torch.manual_seed(0)
    _, model = _build(config)
    model = model.to(torch.bfloat16).eval()
    ids = torch.randint(0, config["vocab_size"], (1, seq_len))
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    cache = out.past_key_values
    conv = ssm = 0
    dtypes = set()
    for layer in getattr(cache, "layers", []):
        seen = set()
        for t in _tensors(getattr(layer, "conv_states", {}), seen):
            conv += t.numel() * t.element_size()
            dtypes.add(("conv", str(t.dtype)))
        for t in _tensors(getattr(layer, "recurrent_states", {}), seen):
            ssm += t.numel() * t.element_size()
            dtypes.add(("ssm", str(t.dtype)))
    return {
        "config": config,
        "seq_len": seq_len,
        "conv_bytes": conv,
        "ssm_bytes": ssm,
        "dtypes": sorted(f"{a}:{b}" for a, b in dtypes),
    }


def main() -> None:
    counts = {p.name: dict(count(p.hf_config), hf_config=p.hf_config) for p in HYBRID_PRESETS}
    states = {}
    for family, config in TINY.items():
        try:
            states[family] = state_bytes(config)
        except Exception as exc:  # recorded, so the fixture says which family's cache was not measured
            states[family] = {"config": config, "error": f"{type(exc).__name__}: {exc}"[:300]}
    out = {
        "_source": (
            f"Counted with transformers {transformers.__version__} (torch {torch.__version__}) by "
            "tools/hf_counts_hybrid.py; see the script's docstring."
        ),
        "transformers": transformers.__version__,
        "counts": counts,
        "state_bytes_bf16": states,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for name, c in counts.items():
        print(f"{name:24s} {c['total']:>16,} {c['routed_expert_params']:>16,}", file=sys.stderr)
    for name, s in states.items():
        print(name, {k: v for k, v in s.items() if k != "config"}, file=sys.stderr)


if __name__ == "__main__":
    main()
