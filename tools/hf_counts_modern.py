"""Regenerate tests/fixtures/hf_counts_modern.json: parameter counts of the modern model types
as Hugging Face's own modeling code builds them. A developer tool, never imported by the
project or its tests; transformers is not a dependency. Run it in a scratch environment:

    python -m venv --system-site-packages /tmp/hfenv && /tmp/hfenv/bin/pip install transformers
    /tmp/hfenv/bin/python tools/hf_counts_modern.py

For each file of tests/fixtures/hf_configs_modern/ (a model's config.json; gemma3 and llama4
through their `text_config`, the language model alone) it builds
AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **config)) on the meta device
and records:
- total: sum of numel over model.parameters() (tied weights once; buffers such as DeepSeek-V3's
  e_score_correction_bias are not parameters);
- moe_layers: blocks holding an `experts` module;
- routed_expert_params: numel of every tensor under those `experts` modules (fused gate_up,
  down and their biases), all layers;
- active: total - routed_expert_params * (E - k) / E, the parameters one token uses;
- sha256 of the config file, so the test knows the counts belong to the file it reads;
- multimodal_total for gemma3/llama4 configs: the whole image-text model the file describes
  (AutoModelForImageTextToText), the figure a model card's total may be.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "fixtures" / "hf_configs_modern"
OUT = ROOT / "tests" / "fixtures" / "hf_counts_modern.json"
TEXT_CONFIG = {"gemma3": "gemma3_text", "llama4": "llama4_text"}
_EXPERTS = re.compile(r"^model\.layers\.(\d+)\.[a-z_]+\.experts\.")


def _text_model(config: dict) -> dict:
    if config["model_type"] not in TEXT_CONFIG:
        return dict(config)
    text = dict(config["text_config"])
    text.setdefault("model_type", TEXT_CONFIG[config["model_type"]])
    return text


def count(path: Path) -> dict:
    raw = path.read_bytes()
    config = _text_model(json.loads(raw))
    model_type = config.pop("model_type")
    config.pop("architectures", None)
    cfg = AutoConfig.for_model(model_type, **config)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    total = sum(p.numel() for p in model.parameters())
    routed, layers = 0, set()
    for name, p in model.named_parameters():
        match = _EXPERTS.match(name)
        if match:
            routed += p.numel()
            layers.add(int(match.group(1)))
    n_experts = getattr(cfg, "n_routed_experts", None) or getattr(cfg, "num_local_experts", None)
    n_experts = n_experts or getattr(cfg, "num_experts", None) or 0
    top_k = getattr(cfg, "num_experts_per_tok", 0) or 0
    inactive = routed * (n_experts - top_k) // n_experts if routed else 0
    assert not routed or routed * (n_experts - top_k) % n_experts == 0
    out = {
        "model_type": model_type,
        "class": type(model).__name__,
        "total": total,
        "active": total - inactive,
        "moe_layers": len(layers),
        "routed_expert_params": routed,
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
    whole = json.loads(raw)
    if whole["model_type"] in TEXT_CONFIG:
        mm_type = whole.pop("model_type")
        whole.pop("architectures", None)
        with torch.device("meta"):
            mm = AutoModelForImageTextToText.from_config(AutoConfig.for_model(mm_type, **whole))
        out["multimodal_total"] = sum(p.numel() for p in mm.parameters())
    return out


def main() -> None:
    counts = {p.stem: count(p) for p in sorted(CONFIGS.glob("*.json"))}
    out = {
        "_source": (
            f"Counted with transformers {transformers.__version__} (torch {torch.__version__}) by "
            "tools/hf_counts_modern.py: AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, "
            "**config)) on the meta device, the text model of gemma3/llama4 configs; see the script's docstring."
        ),
        "transformers": transformers.__version__,
        "counts": counts,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for name, c in counts.items():
        print(f"{name:40s} {c['total']:>16,} {c['active']:>16,} {c['moe_layers']:>4}", file=sys.stderr)


if __name__ == "__main__":
    main()
