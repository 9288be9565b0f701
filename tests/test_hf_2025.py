"""The families of 2025-26 read natively (glm4_moe, minimax_m2, deepseek_v32, kimi_k2 as DeepSeek-V3,
kimi_linear, granitemoehybrid, nemotron_h with MoE layers, mllama, gemma3n) against transformers'
own modeling code, component by component.

Ground truth: tests/fixtures/hf_counts_2025.json, written by tools/hf_counts_2025.py with
transformers 5.25.0 in a scratch environment: for each file of tests/fixtures/hf_configs_2025/, the
parameters transformers builds on the meta device filed by the modules that hold them (attention,
the DSA indexer, the state mixers, routed and shared experts, router, MLP, embeddings, towers,
projector, the rest), the forward FLOPs of 16 tokens under FlopCounterMode and the bf16 bytes of the
model's own cache after them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from sizing.formulas import active_params, flop_breakdown, param_components
from sizing.hybrid import active_params as hybrid_active
from sizing.hybrid import hybrid_from_hf_config, kv_cache_bytes, state_bytes
from sizing.hybrid import param_components as hybrid_components
from sizing.inputs.hf import from_hf_config
from sizing.memory import kv_cache_bytes as stack_kv_bytes
from sizing.vision import gemma3n_kv_elements, gemma3n_params, gemma3n_text_shape, vlm_active_params, vlm_from_hf_config
from sizing.whole import config_kind

FIXTURES = Path(__file__).parent / "fixtures"
COUNTED = json.loads((FIXTURES / "hf_counts_2025.json").read_text())
COUNTS = COUNTED["counts"]
FILES = sorted((FIXTURES / "hf_configs_2025").glob("*.json"))
T = 16  # the tool's forward


def _stack_group(key: str) -> str:
    exact = {"tok_emb": "embedding", "lm_head": "lm_head", "attn.indexer": "indexer", "moe.router": "router"}
    exact |= {"moe.experts": "routed_experts", "moe.shared": "shared_experts", "moe.shared_gate": "shared_experts"}
    if key in exact:
        return exact[key]
    if (key.startswith("attn.") and not key.endswith("_norm")) or key in ("attn.q_norm", "attn.k_norm"):
        return "attention"
    if key.startswith(("attn.q_a_norm", "attn.kv_a_norm")):
        return "attention"
    return "mlp" if key.startswith("mlp.") else "other"


def _hybrid_group(key: str, model_type: str) -> str:
    if key.startswith(("mamba.", "deltanet.", "kda.")):
        return "state_mixer"
    if key == "mlp" and model_type == "granitemoehybrid":
        return "shared_experts"  # Granite names its dense MLP shared_mlp
    return "mlp" if key == "mlp" else _stack_group(key)


def _vision_group(key: str) -> str:
    if key.startswith("vision."):
        return "vision_tower"
    if key.startswith("projector."):
        return "projector"
    inner = key.removeprefix("language_model.")
    named = {"cross_attention": "attention", "cross_mlp": "mlp", "cross_norms_and_gates": "other"}
    return named.get(inner, "embedding" if inner == "embed_tokens_extra_rows" else _stack_group(inner))


def _gemma3n_group(key: str) -> str:
    named = {"text.embed_tokens": "embedding", "text.per_layer_embeddings": "per_layer_embeddings"}
    named |= {
        "text.mlp": "mlp",
        "vision.tower": "vision_tower",
        "embed_audio": "projector",
        "embed_vision": "projector",
    }
    if key in named:
        return named[key]
    if key.startswith("text.attention"):
        return "attention"
    return "audio_tower" if key.startswith("audio.") else "other"


def ours(data: dict) -> tuple[dict[str, int], int]:
    """(parameters by group, active parameters) as this tool counts them."""
    groups: Counter[str] = Counter()
    kind = config_kind(data)
    if kind is None:
        cfg = from_hf_config(data)
        for c in param_components(cfg):
            groups[_stack_group(c.key)] += c.count
        return dict(groups), active_params(cfg)
    if kind == "hybrid":
        m = hybrid_from_hf_config(data)
        for key, size in hybrid_components(m).items():
            groups[_hybrid_group(key, data["model_type"])] += size
        return dict(groups), hybrid_active(m)
    if kind == "gemma3n":
        for key, size in gemma3n_params(data).items():
            groups[_gemma3n_group(key)] += size
        return dict(groups), sum(groups.values())
    text, vision = vlm_from_hf_config(data)
    for c in param_components(text):
        groups[_vision_group(c.key)] += c.count
    for key, size in (*vision.text_extra, *vision.params().items()):
        groups[_vision_group(key if key.startswith(("vision.", "projector.")) else f"language_model.{key}")] += size
    return dict(groups), vlm_active_params(text, vision)


def test_counts_name_their_transformers_version_and_cover_every_file():
    assert COUNTED["transformers"] == "5.25.0" and "5.25.0" in COUNTED["_source"]
    assert {p.stem for p in FILES} == set(COUNTS)


def test_every_named_family_has_a_file():
    types = {json.loads(p.read_text())["model_type"] for p in FILES}
    named = {"glm4_moe", "minimax_m2", "deepseek_v32", "kimi_k2", "kimi_linear", "granitemoehybrid", "nemotron_h"}
    assert types >= named | {"mllama", "gemma3n", "gemma3n_text"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_component_equals_transformers(path):
    counted = COUNTS[path.stem]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == counted["sha256"]  # the counts are of this file
    groups, active = ours(json.loads(path.read_text()))
    assert {k: v for k, v in groups.items() if v} == counted["groups"]
    assert sum(groups.values()) == counted["total"]
    assert active == counted["active"]


def _cache(data: dict) -> tuple[int, int]:
    """(KV bytes, state bytes) of one sequence of T tokens, bf16 (the SSM / DeltaNet state fp32)."""
    kind = config_kind(data)
    if kind is None:
        return stack_kv_bytes(from_hf_config(data), T), 0
    if kind == "hybrid":
        m = hybrid_from_hf_config(data)
        return kv_cache_bytes(m, T), sum(state_bytes(m).values())
    if kind == "gemma3n":
        text = data.get("text_config", data)
        return 2 * gemma3n_kv_elements(gemma3n_text_shape(text), T), 0
    text, _ = vlm_from_hf_config(data)  # no image in the prompt: the self-attention layers' cache
    return stack_kv_bytes(text, T), 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_kv_cache_and_state_equal_the_models_own_cache(path):
    counted = COUNTS[path.stem]
    assert _cache(json.loads(path.read_text())) == (counted["kv_bytes_16"], counted["state_bytes"])


STACKS = [p for p in FILES if config_kind(json.loads(p.read_text())) is None]


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem)
def test_forward_flops_equal_flop_counter_mode(path):
    """The `full` convention is what FlopCounterMode counts of the model's code (masked scores whole,
    MoE experts as the k chosen per token): every matmul agrees, the DSA indexer's included."""
    cfg = from_hf_config(json.loads(path.read_text()))
    assert flop_breakdown(cfg, T, "full").forward == COUNTS[path.stem]["forward_flops_16"]
