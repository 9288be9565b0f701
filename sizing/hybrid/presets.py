"""Hybrid presets: each the model's Hugging Face config fields (the ones that set a size; the
rest take the transformers 5.24 defaults), the published parameter count and its source.
tools/hf_counts_hybrid.py builds each with HF's own modeling code on the meta device and
records the counts in tests/fixtures/hf_counts_hybrid.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .hf import hybrid_from_hf_config
from .model import HybridModel

_NEMOTRON_H_8B_PATTERN = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"


@dataclass(frozen=True)
class HybridPreset:
    name: str
    hf_config: dict
    published_total: float  # parameters, as published (rounded as the source rounds)
    published_active: float | None
    rounding: float  # half a unit of the published figure's last digit, relative
    source: str
    truncated: bool = False  # the figure is a name that truncates (9B: 9 <= N < 10 billion)

    def model(self) -> HybridModel:
        return hybrid_from_hf_config(dict(self.hf_config, _name_or_path=self.name))


HYBRID_PRESETS: tuple[HybridPreset, ...] = (
    HybridPreset(
        "mamba2-2.7b",
        # state-spaces/mamba2-2.7b: d_model 2560, n_layer 64, vocab 50277 padded to a multiple of 16,
        # Mamba-2 defaults (d_state 128, headdim 64, expand 2, ngroups 1), tied embeddings.
        dict(
            model_type="mamba2",
            hidden_size=2560,
            num_hidden_layers=64,
            num_heads=80,
            head_dim=64,
            state_size=128,
            n_groups=1,
            expand=2,
            vocab_size=50288,
            tie_word_embeddings=True,
        ),
        2.7e9,
        None,
        0.05 / 2.7,
        "Dao & Gu 2024 (arXiv:2405.21060) release state-spaces/mamba2-2.7b: 2.7B",
    ),
    HybridPreset(
        "jamba-v0.1",
        # ai21labs/Jamba-v0.1 config.json (JambaConfig's defaults are this model's)
        dict(
            model_type="jamba",
            hidden_size=4096,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            intermediate_size=14336,
            num_experts=16,
            num_experts_per_tok=2,
            attn_layer_period=8,
            attn_layer_offset=4,
            expert_layer_period=2,
            expert_layer_offset=1,
            mamba_d_state=16,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_dt_rank=256,
            vocab_size=65536,
        ),
        52e9,
        12e9,
        0.5 / 52,
        "AI21, Jamba (arXiv:2403.19887) and the ai21labs/Jamba-v0.1 card: 52B total, 12B active",
    ),
    HybridPreset(
        "nemotron-h-8b",
        # Megatron-Bridge NemotronHModel8BProvider; HF nvidia/Nemotron-H-8B-Base-8K config.json
        dict(
            model_type="nemotron_h",
            hidden_size=4096,
            num_hidden_layers=52,
            hybrid_override_pattern=_NEMOTRON_H_8B_PATTERN,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            intermediate_size=21504,
            mamba_num_heads=128,
            mamba_head_dim=64,
            ssm_state_size=128,
            n_groups=8,
            conv_kernel=4,
            vocab_size=131072,
        ),
        8e9,
        None,
        0.5 / 8,
        "NVIDIA, Nemotron-H (arXiv:2504.03624): Nemotron-H-8B",
    ),
    HybridPreset(
        "bamba-9b",
        # ibm-ai-platform/Bamba-9B config.json
        dict(
            model_type="bamba",
            hidden_size=4096,
            num_hidden_layers=32,
            attn_layer_indices=[9, 18, 27],
            num_attention_heads=32,
            num_key_value_heads=8,
            intermediate_size=14336,
            mamba_n_heads=128,
            mamba_d_head=64,
            mamba_n_groups=1,
            mamba_d_state=128,
            vocab_size=128256,
        ),
        9e9,
        None,
        1 / 9,
        "IBM, ibm-ai-platform/Bamba-9B: the name's 9B (truncated)",
        truncated=True,
    ),
    HybridPreset(
        "falcon-h1-7b",
        # tiiuae/Falcon-H1-7B-Base config.json (mamba_rms_norm false: no gated norm)
        dict(
            model_type="falcon_h1",
            hidden_size=3072,
            num_hidden_layers=44,
            num_attention_heads=12,
            num_key_value_heads=2,
            head_dim=128,
            intermediate_size=12288,
            mamba_d_ssm=3072,
            mamba_n_heads=24,
            mamba_d_head=128,
            mamba_d_state=256,
            mamba_n_groups=1,
            mamba_d_conv=4,
            mamba_chunk_size=128,
            vocab_size=130048,
        ),
        7e9,
        None,
        1 / 7,
        "TII, tiiuae/Falcon-H1-7B-Base: the name's 7B (truncated)",
        truncated=True,
    ),
    HybridPreset(
        "qwen3-next-80b-a3b",
        # Qwen/Qwen3-Next-80B-A3B-Instruct config.json (the MTP layer of the checkpoint is not
        # built by transformers' Qwen3NextForCausalLM and is not counted here)
        dict(
            model_type="qwen3_next",
            hidden_size=2048,
            num_hidden_layers=48,
            num_attention_heads=16,
            num_key_value_heads=2,
            head_dim=256,
            intermediate_size=5120,
            moe_intermediate_size=512,
            shared_expert_intermediate_size=512,
            num_experts=512,
            num_experts_per_tok=10,
            decoder_sparse_step=1,
            full_attention_interval=4,
            linear_num_key_heads=16,
            linear_num_value_heads=32,
            linear_key_head_dim=128,
            linear_value_head_dim=128,
            linear_conv_kernel_dim=4,
            vocab_size=151936,
        ),
        80e9,
        3e9,
        0.5 / 80,
        "Qwen, Qwen3-Next-80B-A3B card: 80B total, 3B activated",
    ),
)


@cache
def hybrid_preset(name: str) -> HybridPreset:
    for p in HYBRID_PRESETS:
        if p.name == name:
            return p
    raise KeyError(name)
