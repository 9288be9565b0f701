"""The weights one tensor-parallel rank of vLLM holds ("Model loading took X GiB"): the model in
its format split over tp, plus what is not split evenly:

    rank weights = deployed bytes / tp
                 + the replicated parts' other (tp - 1)/tp share: norms, biases, routers; MLA's
                   q_a and kv_a projections (ReplicatedLinear in vLLM's DeepSeek-V2/V3)
                 + K and V projections replicated when tp > h_kv: each rank holds one head's,
                   2·d·d_h per layer, not 2·d·h_kv·d_h / tp (QKVParallelLinear)
                 + the token table and lm_head padded to a multiple of 64 rows
                   (VocabParallelEmbedding, DEFAULT_VOCAB_PADDING_SIZE)
                 + MXFP4 expert matrices padded as the GPU's MoE kernel wants them
                   (sizing/data/engine_memory.json: Marlin 128 / 256, Triton 64, FlashInfer 256)
                 + the rotary cos/sin cache, max_positions x rotary_dim in 16 bits (one per rank)

Checked against logged weights (sizing/data/engine_logs.json): Llama-3.1-8B bf16 loads 14.9888
GiB, 8,030,261,248 x 2 bytes + 131,072 x 128 x 2 bytes of cos/sin cache.
"""

from __future__ import annotations

from fractions import Fraction

from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig
from sizing.memory.engine_data import mxfp4_moe_alignment
from sizing.memory.quant import block_matrix_params, deployed_weights_bytes, weight_format
from sizing.validate import require_int
from sizing.vocabulary import DTYPE_BITS, ceil_div

VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE
ROPE_CACHE_BYTES = 2  # the cos/sin cache is kept in the model's 16-bit dtype
MXFP4_FORMATS = ("mxfp4", "mxfp4-experts")


def round_up(value: int, multiple: int) -> int:
    return ceil_div(value, multiple) * multiple


def matrix_bits(weights: str, expert: bool) -> Fraction:
    """Bits per weight of a block matrix in `weights`: the dtype's, the format's, or 16 for a
    non-expert matrix of an experts-only format (GPT-OSS's MXFP4 experts, bf16 attention)."""
    fmt = weight_format(weights)
    if fmt is None:
        return Fraction(DTYPE_BITS[weights])
    if fmt.scope == "experts" and not expert:
        return Fraction(16)
    return fmt.bits


def replicated_small_params(cfg: ModelConfig) -> int:
    """Norms, biases, routers, sinks: every parameter outside the block matrices and the token
    table / lm_head, which no engine shards."""
    return P.total_params(cfg) - block_matrix_params(cfg) - P.embedding_params(cfg) - P.lm_head_params(cfg)


def _small_bits(weights: str) -> Fraction:
    fmt = weight_format(weights)
    return Fraction(DTYPE_BITS[weights]) if fmt is None else fmt.other_bits


def replicated_projection_params(cfg: ModelConfig) -> int:
    """MLA's q_a and kv_a projections over all layers, d·(q_lora + r_kv + d_r): every rank holds them."""
    if not cfg.is_mla:
        return 0
    return cfg.n_layers * cfg.d_model * ((cfg.q_lora_rank or 0) + cfg.kv_lora_rank + cfg.qk_rope_head_dim)


def kv_replication_extra_params(cfg: ModelConfig, tp: int) -> int:
    """Per rank, K and V projections beyond the even split when tp > h_kv: L·2·d·(d_h - h_kv·d_h/tp)."""
    if cfg.is_mla or tp <= cfg.kv_heads:
        return 0
    return cfg.n_layers * 2 * cfg.d_model * (cfg.d_head - cfg.kv_width // tp)


def vocab_padding_params(cfg: ModelConfig) -> int:
    """Rows the token table and an untied lm_head gain padded to 64, times d."""
    pad = round_up(cfg.vocab_size, VOCAB_PADDING) - cfg.vocab_size
    return pad * cfg.d_model * (1 if cfg.tied_embeddings else 2)


def mxfp4_padding_bytes(cfg: ModelConfig, weights: str, tp: int, gpu: GPU) -> int:
    """Per rank, the MXFP4 expert matrices' growth when the kernel pads the intermediate size
    I/tp and the hidden size d: L_moe·E·m·(I'·d' - I/tp·d) weights at the format's bits."""
    alignment = mxfp4_moe_alignment(gpu)
    if weights not in MXFP4_FORMATS or not cfg.is_moe or alignment is None:
        return 0
    inter, hidden, _ = alignment
    i_rank = ceil_div(cfg.expert_ff, tp)
    grown = round_up(i_rank, inter) * round_up(cfg.d_model, hidden) - i_rank * cfg.d_model
    extra = cfg.n_moe_layers * cfg.n_experts * cfg.mlp_matrices * grown
    return ceil_div(int(extra * matrix_bits(weights, expert=True)), 8)


def rope_cache_bytes(cfg: ModelConfig, max_positions: int) -> int:
    """The rotary cos/sin cache: max_positions x rotary_dim in 16 bits; none without RoPE."""
    if cfg.position != "rope":
        return 0
    return require_int("max_positions", max_positions) * cfg.rotary_dim * ROPE_CACHE_BYTES


def engine_weights_bytes_per_rank(cfg: ModelConfig, weights: str, tp: int, gpu: GPU, max_positions: int) -> int:
    """The weights one of tp ranks allocates (module docstring), bytes."""
    require_int("tp", tp)
    whole = deployed_weights_bytes(cfg, weights)
    share = Fraction(tp - 1, tp)
    dense_bits = matrix_bits(weights, False)
    small = replicated_small_params(cfg) * _small_bits(weights)
    replicated = (small + replicated_projection_params(cfg) * dense_bits) / 8
    fmt = weight_format(weights)
    table_bits = dense_bits if fmt is None else fmt.embedding_bits
    extras = (
        replicated * share
        + kv_replication_extra_params(cfg, tp) * dense_bits / 8
        + vocab_padding_params(cfg) * table_bits / 8 / tp
    )
    return (
        ceil_div(whole, tp)
        + ceil_div(int(extras * 8), 8)
        + mxfp4_padding_bytes(cfg, weights, tp, gpu)
        + (rope_cache_bytes(cfg, max_positions))
    )
