"""GGUF K-quant mixes, tensor by tensor: which tensors llama.cpp stores at another type than the
file's base type (llama.cpp src/llama-quant.cpp, llama_tensor_get_type), for the formats of
quant.py whose source is ggml's.

    attn_v      8 experts (Mixtral): Q8_0, every GGUF type; else, in *_M mixes: Q6_K in the layers
                use_more_bits picks; else in Q4_K_M on an 80-layer model (llama.cpp's LLM_TYPE_70B:
                8 query heads share each attn_v, "nearly negligible increase in model size"): Q5_K
    attn_k      8 experts: Q8_0, every GGUF type
    attn_output 8 experts, Q4_K_M: Q5_K
    ffn_down    *_M mixes: Q6_K in the use_more_bits layers (the layer of a merged expert tensor is
                parsed from its name, so all of a layer's experts move together)

use_more_bits: the first and last eighth of the layers and every third between.

The `2023` mixes are llama.cpp's before PR #4872 (2024-01-12): for an MoE model its mixes did not
reach the expert ffn_down tensors (named blk.N.ffn_down.E.weight then) and attn_output kept the
base type (PR #4906 moved it to Q5_K for 8 experts; PR #4927 fixed the per-layer ffn_down mix of
experts). The first Mixtral-8x7B GGUF files (December 2023) were made so: their blk.31.ffn_down
experts are q4_K in a Q4_K_M file (abetlen/llama-cpp-python issue #1014 lists the tensors). A
dense model's 2023 mix is the current one.
"""

from __future__ import annotations

from fractions import Fraction

from sizing.inputs import ModelConfig

Q8_0 = Fraction(34 * 8, 32)  # block_q8_0: 32 int8 + fp16 d
Q5_K = Fraction(176 * 8, 256)  # block_q5_K
Q6_K = Fraction(210 * 8, 256)  # block_q6_K
LLAMA_70B_LAYERS = 80  # llama.cpp's model type LLM_TYPE_70B for Llama-architecture models


def use_more_bits(layer: int, n_layers: int) -> bool:
    """llama.cpp's use_more_bits: the first and last eighth of the layers and every third between."""
    eighth = n_layers // 8
    return layer < eighth or layer >= 7 * n_layers // 8 or (layer - eighth) % 3 == 2


def _attn_v_type(cfg: ModelConfig, layer: int, key: str) -> Fraction | None:
    if cfg.is_moe and cfg.n_experts == 8:
        return Q8_0
    if key in ("q4_k_m", "q5_k_m") and use_more_bits(layer, cfg.n_layers):
        return Q6_K
    if key == "q4_k_m" and cfg.n_layers == LLAMA_70B_LAYERS:
        return Q5_K
    return None


def kquant_overrides(
    cfg: ModelConfig, key: str, value: int, key_matrix: int, output: int, down_of_layer
) -> list[tuple[int, Fraction]]:
    """(parameters, bits per weight) of every tensor the mix `key` stores at another type than its
    base, layer by layer. `value`, `key_matrix`, `output`: one layer's attn_v, attn_k and
    attn_output weights; down_of_layer(layer): that layer's ffn_down weights (all its experts).
    A `-2023` key: llama.cpp's mix before PR #4872 (module docstring)."""
    key, legacy = key.removesuffix("-2023"), key.endswith("-2023")
    eight_experts = cfg.is_moe and cfg.n_experts == 8
    moe_mix = not (legacy and cfg.is_moe)  # the 2023 mixes never reached an MoE's ffn_down / attn_output
    out = []
    for layer in range(cfg.n_layers):
        v = _attn_v_type(cfg, layer, key)
        if v is not None and value:
            out.append((value, v))
        if eight_experts and key_matrix:
            out.append((key_matrix, Q8_0))
        if eight_experts and key == "q4_k_m" and moe_mix:
            out.append((output, Q5_K))
        if key in ("q4_k_m", "q5_k_m") and use_more_bits(layer, cfg.n_layers) and moe_mix:
            out.append((down_of_layer(layer), Q6_K))
    return out
