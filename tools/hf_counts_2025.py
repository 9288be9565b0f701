"""Regenerate tests/fixtures/hf_counts_2025.json: the families of 2025-26 this tool reads natively
(glm4_moe, minimax_m2, deepseek_v32, kimi_k2 as deepseek_v3, kimi_linear, granitemoehybrid,
nemotron_h with MoE layers, mllama, gemma3n) as transformers builds them. A developer tool, run in
a scratch environment with the `hf` extra (Gemma 3n's vision tower also needs timm):

    python tools/hf_counts_2025.py

For each file of tests/fixtures/hf_configs_2025/ (a config.json) it builds the model on the meta
device with hf_meta (the class tools/hf_counts_modern.py and the generic path use: the image-text
model for a vision-language type, else the causal LM) and records:
- total: sum of numel over model.parameters() (tied weights once), and `active` (routed experts at
  k/E of their size: hf_meta.count);
- groups: the parameters by component, each parameter filed by the modules that hold it (GROUP_RULES:
  the class names of transformers' modules), so that tests/test_hf_2025.py compares component by
  component;
- forward_flops_16: FlopCounterMode over one forward of 16 tokens (2 per multiply-add; masked
  attention counted whole), and kv_bytes_16 / state_bytes: the bf16 bytes of the model's own cache
  object after that forward, keys and values apart from conv and recurrent states;
- sha256 of the config file, so the test knows the counts belong to the file it reads.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CONFIGS = ROOT / "tests" / "fixtures" / "hf_configs_2025"
OUT = ROOT / "tests" / "fixtures" / "hf_counts_2025.json"
SEQ_LEN = 16

# A parameter's group: by its name (NAME_RULES), else by the tower holding it (TOWER_RULES), else by the
# class of the innermost module holding it that a CLASS_RULES pattern matches
NAME_RULES: tuple[tuple[str, str], ...] = (
    ("projector", r"multi_modal_projector|embed_vision|embed_audio"),
    ("shared_experts", r"shared_expert|shared_mlp"),
    ("router", r"\.(mlp|mixer|block_sparse_moe)\.gate\.weight$"),
    ("per_layer_embeddings", r"embed_tokens_per_layer"),
    ("embedding", r"embed_tokens|\.embeddings\.weight$"),
    ("lm_head", r"^lm_head\."),
)
# the towers hold modules of every kind: a parameter anywhere inside one is the tower's
TOWER_RULES: tuple[tuple[str, str], ...] = (("vision_tower", r"Vision|TimmWrapper"), ("audio_tower", r"Audio"))
CLASS_RULES: tuple[tuple[str, str], ...] = (
    ("indexer", r"Indexer"),
    ("routed_experts", r"Experts$"),
    ("router", r"Router$"),
    ("state_mixer", r"Mamba|DeltaAttention|GatedDeltaNet"),
    ("attention", r"Attention$"),
    ("mlp", r"MLP$"),
)


def group_of(name: str, classes: list[str]) -> str:
    """`classes`: the classes of the modules holding the parameter, outermost first."""
    for group, pattern in NAME_RULES:
        if re.search(pattern, name):
            return group
    for group, pattern in TOWER_RULES:
        if any(re.search(pattern, cls) for cls in classes):
            return group
    for cls in reversed(classes):
        for group, pattern in CLASS_RULES:
            if re.search(pattern, cls):
                return group
    return "other"


def groups(model) -> dict[str, int]:
    modules = dict(model.named_modules())
    out: Counter[str] = Counter()
    for name, p in model.named_parameters():
        parts = name.split(".")
        owners = [".".join(parts[:i]) for i in range(1, len(parts))]
        classes = [type(modules[o]).__name__ for o in owners if o in modules]
        out[group_of(name, classes)] += p.numel()
    return dict(sorted(out.items()))


def count(path: Path) -> dict:
    from hf_meta.build import build_on_meta
    from hf_meta.count import count_params
    from hf_meta.measure import measure

    raw = path.read_bytes()
    built = build_on_meta(json.loads(raw))
    counted = count_params(built.model, built.config)
    measured = measure(built.model, SEQ_LEN, with_activations=False)
    return {
        "model_type": built.model_type,
        "class": built.model_class,
        "total": counted.total,
        "active": counted.active,
        "groups": groups(built.model),
        "forward_flops_16": sum(measured.forward_flops.values()),
        "kv_bytes_16": measured.kv_cache_bytes,
        "state_bytes": measured.state_bytes,
        "sha256": hashlib.sha256(raw).hexdigest(),
    }


def main() -> None:
    warnings.filterwarnings("ignore")
    import torch
    import transformers

    counts = {p.stem: count(p) for p in sorted(CONFIGS.glob("*.json"))}
    out = {
        "_source": (
            f"Counted with transformers {transformers.__version__} (torch {torch.__version__}) by "
            "tools/hf_counts_2025.py on the meta device; see the script's docstring."
        ),
        "transformers": transformers.__version__,
        "counts": counts,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for name, c in counts.items():
        print(f"{name:44s} {c['total']:>16,} {c['kv_bytes_16']:>10,} {c['state_bytes']:>10,}", file=sys.stderr)


if __name__ == "__main__":
    main()
