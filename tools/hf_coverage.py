"""Regenerate docs/coverage.md, tests/fixtures/hf_coverage.json and sizing/data/hf_architectures.json
from the installed transformers: for every decoder, MoE, hybrid and vision-language model_type it has
(the model types of its causal-LM and image-text-to-text auto mappings), one config is built on the
meta device and sized three ways:

- native-exact: this tool's own reader sizes it (sizing.inputs.hf, sizing.hybrid, sizing.vision) and
  its total equals the parameters transformers builds;
- native-drift: the reader sizes it but the totals differ (tests/test_hf_coverage.py fails);
- generic-exact: the reader does not take it, and the `hf` extra (hf_meta) builds it, counts its
  parameters, runs its forward under FlopCounterMode and measures its cache, on the meta device;
- refused: neither, with the reason.

The config of a type is its config class's defaults (for most families, the reference checkpoint's
shape: the class docstring names it), with FIXUPS where the defaults do not build or name a shape no
checkpoint has; meta tensors cost nothing, so full-size defaults are as cheap as small ones. Run:

    python tools/hf_coverage.py           # needs the hf extra (torch, transformers)
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.hf_coverage_render import render_markdown  # noqa: E402

DOC = ROOT / "docs" / "coverage.md"
FIXTURE = ROOT / "tests" / "fixtures" / "hf_coverage.json"
ARCHITECTURES = ROOT / "sizing" / "data" / "hf_architectures.json"
SEQ_LEN = 16  # tokens of the generic path's forward: the counts do not depend on it

# Where a config class's defaults do not describe a buildable model, the released checkpoint's values
# (each from the model's config.json, named beside it).
FIXUPS: dict[str, dict] = {
    "glm4_moe": {"head_dim": 128},  # zai-org/GLM-4.5-Air: 96 heads of 128 on a 4096 residual
    "deepseek_v2": {"num_experts_per_tok": 6},  # deepseek-ai/DeepSeek-V2: 6 of 160 experts per token
    "dots1": {"n_routed_experts": 128, "num_experts_per_tok": 6, "n_shared_experts": 2},  # rednote-hilab/dots.llm1
    "hunyuan_v1_dense": {"head_dim": 128},  # tencent/Hunyuan-7B: 128-wide heads (the class leaves it None)
    "hunyuan_v1_moe": {"head_dim": 128},  # tencent/Hunyuan-A13B
    "ministral": {"head_dim": 128},  # mistralai/Ministral-8B-Instruct-2410
    "nemotron": {"num_key_value_heads": 8},  # nvidia/Nemotron-4-15B: 8 key/value heads
    "dbrx": {"attn_config": {"rope_theta": 500000.0, "kv_n_heads": 8, "clip_qkv": 8.0}},  # databricks/dbrx-base
    # the class gives no layer pattern: LFM2's convolution blocks with attention every fourth layer
    "lfm2_moe": {"layer_types": ["full_attention" if i % 4 == 2 else "conv" for i in range(32)]},
    # google/gemma-3-4b-it's SigLIP tower (the class default is SigLIP-base, whose 14 x 14 patches do
    # not pool to the 256 image tokens)
    "gemma3": {
        "vision_config": {
            "hidden_size": 1152,
            "intermediate_size": 4304,
            "num_hidden_layers": 27,
            "num_attention_heads": 16,
            "patch_size": 14,
            "image_size": 896,
            "vision_use_head": False,
        }
    },
}


def relevant_model_types() -> list[str]:
    from transformers.models.auto import modeling_auto as auto

    return sorted(set(auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | set(auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES))


def default_config(model_type: str) -> dict:
    from transformers import AutoConfig

    data = AutoConfig.for_model(model_type, **FIXUPS.get(model_type, {})).to_dict()
    data.update(FIXUPS.get(model_type, {}))
    data["model_type"] = model_type
    return data


def native_total(data: dict) -> tuple[str | None, int | None, str | None]:
    """(kind, this tool's own total, why its reader refused) for one config."""
    from sizing.formulas import total_params
    from sizing.hybrid import hybrid_from_hf_config
    from sizing.hybrid import param_components as hybrid_components
    from sizing.inputs.hf import from_hf_config
    from sizing.vision import gemma3n_params, vlm_from_hf_config, vlm_params
    from sizing.whole import config_kind, native_refusal

    kind = config_kind(data)
    if kind == "transformers":
        return kind, None, None
    refusal = native_refusal(data, kind)
    if refusal is not None:
        return kind, None, refusal
    if kind is None:
        return "stack", total_params(from_hf_config(data)), None
    if kind == "hybrid":
        return kind, sum(hybrid_components(hybrid_from_hf_config(data)).values()), None
    if kind == "gemma3n":
        return kind, sum(gemma3n_params(data).values()), None
    return kind, vlm_params(*vlm_from_hf_config(data))["total"], None


def _category(model_type: str, routed: int, state_bytes: int | None, native_kind: str | None) -> str:
    from transformers.models.auto import modeling_auto as auto

    if model_type in auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES or native_kind == "vision-language":
        return "vision-language"
    if native_kind == "hybrid" or state_bytes:
        return "hybrid"
    return "MoE" if routed else "decoder"


def survey(model_type: str) -> dict:
    """One row of the table."""
    from hf_meta.build import build_on_meta
    from hf_meta.count import count_params
    from hf_meta.measure import measure

    row: dict = {"model_type": model_type}
    try:
        data = default_config(model_type)
        built = build_on_meta(data)
    except Exception as exc:
        why = (
            "its config class's defaults do not build in transformers (a checkpoint's own config goes the generic way)"
        )
        return dict(row, status="refused", reason=f"{why}: {_line(exc)}")
    counted = count_params(built.model, built.config)
    row.update(model_class=built.model_class, transformers_total=counted.total)
    try:
        kind, ours, refusal = native_total(data)
    except Exception as exc:  # a reader that fails instead of refusing is a bug: shown, never hidden
        kind, ours, refusal = None, None, f"this tool's reader failed: {_line(exc)}"
    state = None
    if ours is not None:
        row.update(native_total=ours, status="native-exact" if ours == counted.total else "native-drift")
    else:
        try:
            measured = measure(built.model, SEQ_LEN, with_activations=False)
            state = measured.state_bytes
            row.update(status="generic-exact", reason=refusal)
        except Exception as exc:  # the parameters are still exact; FLOPs and cache are then estimated
            why = f"parameters exact; its forward does not run on the meta device (FLOPs 2 x params): {_line(exc)}"
            row.update(status="generic-exact", reason=why if refusal is None else f"{refusal}; {why}")
    row["category"] = _category(model_type, counted.routed_expert_params, state, kind)
    return {k: v for k, v in row.items() if v is not None}


def _line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:240]


def architectures() -> dict[str, str]:
    from transformers.models.auto import modeling_auto as auto

    out: dict[str, str] = {}
    for mapping in (auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES):
        for model_type, names in mapping.items():
            for name in [names] if isinstance(names, str) else names:
                out.setdefault(name, model_type)
    return dict(sorted(out.items()))


def main() -> None:
    warnings.filterwarnings("ignore")
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    version = transformers.__version__
    rows = []
    for model_type in relevant_model_types():
        start = time.time()
        rows.append(survey(model_type))
        print(f"{model_type:32s} {rows[-1]['status']:14s} {time.time() - start:5.1f}s", file=sys.stderr)
    source = (
        f"transformers {version} (torch {torch.__version__}), tools/hf_coverage.py: every model_type of its "
        "causal-LM and image-text-to-text auto mappings, its config class's defaults (FIXUPS), built on the meta device"
    )
    FIXTURE.write_text(json.dumps({"_source": source, "transformers": version, "rows": rows}, indent=1) + "\n")
    DOC.write_text(render_markdown(rows, version, FIXUPS))
    arch_source = (
        f"transformers {version}: the class names of MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and "
        "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES (transformers/models/auto/modeling_auto.py), each with its "
        "model_type; written by tools/hf_coverage.py"
    )
    table = {"_source": arch_source, "transformers": version, "architectures": architectures()}
    ARCHITECTURES.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
