"""Weights as deployed: quantized formats with their real bits per weight (scales and zero
points included) and the tensors each format leaves in 16 bits.

A format stores the matmul weights of the blocks ("linear": attention projections, MLPs,
experts) or of the routed experts only ("experts", as GPT-OSS ships MXFP4) in `bits` per
weight; the token table, the lm_head and everything else (norms, biases, router, sinks) keep
their own widths. Bits per weight, from the storage each format defines:

* GPTQ / AWQ, 4-bit, group g: 4 bits + per group an fp16 scale and a packed 4-bit zero point
  (AutoGPTQ/AutoAWQ `qzeros` int32-packed, 8 per word): 4 + (16 + 4)/g. g = 128: 4.15625.
* MXFP4: 32 FP4 (E2M1) elements share one 8-bit E8M0 scale (OCP Microscaling Formats spec
  v1.0, sec. 5): 4 + 8/32 = 4.25.
* NVFP4: 16 FP4 elements share one FP8 E4M3 scale, plus one fp32 scale per tensor (NVIDIA,
  "Introducing NVFP4", 2025): 4 + 8/16 = 4.5 (the per-tensor fp32 is negligible, not counted).
* FP8 per-tensor: 8 bits + one fp32 scale per tensor (negligible): 8. FP8 per-block 128x128
  (DeepSeek-V3, arXiv:2412.19437 sec. 3.3.2: one fp32 scale per 128x128 weight block):
  8 + 32/16384 = 8.001953125.
* GGUF, from ggml's block structs (ggml/src/ggml-common.h): Q8_0 = 32 int8 + fp16 d = 34 bytes
  per 32 = 8.5; Q4_0 = 16 bytes of nibbles + fp16 d = 18 bytes per 32 = 4.5; Q4_K = 2 fp16 +
  12 bytes of 6-bit scales + 128 bytes of nibbles = 144 bytes per 256 = 4.5; Q5_K = 176 bytes
  per 256 = 5.5; Q6_K = 128 + 64 + 16 + 2 = 210 bytes per 256 = 6.5625.
  The mixes follow llama.cpp's llama_tensor_get_type tensor by tensor (kquant.py): Q4_K_M and
  Q5_K_M store attn_v and ffn_down in Q6_K in the layers use_more_bits picks, Q4_K_M attn_v in
  Q5_K on an 80-layer model, and an 8-expert model's attn_v and attn_k in Q8_0 (attn_output in
  Q5_K under Q4_K_M); every K-quant and Q4_0 store output.weight (lm_head) in Q6_K; 1-D tensors
  (norms, biases) stay f32; the token table takes the base type.

Weight-only formats (GPTQ, AWQ, GGUF, MXFP4 and NVFP4 on Hopper) dequantize in the kernel: the
decode step reads the packed bytes, the matmuls run in bf16 at bf16 peak, and the dequantization
(a multiply-add per weight in registers, 2 FLOPs per weight read) is hidden under the memory
time while decode is memory-bound. W8A8 formats (fp8 per-tensor / per-block) run the GEMMs in
fp8 at the fp8 peak.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from sizing.formulas import params as P
from sizing.inputs import ModelConfig
from sizing.memory.kquant import kquant_overrides, use_more_bits  # noqa: F401  (use_more_bits: re-exported)
from sizing.validate import require_choice, require_int
from sizing.vocabulary import DTYPE_BITS, ceil_div


@dataclass(frozen=True)
class QuantFormat:
    key: str
    bits: Fraction  # storage bits per quantized weight, scales and zero points included
    arithmetic: str  # how `bits` follows from the format's storage
    scope: str  # "linear": every block matmul weight; "experts": the routed experts only
    compute_dtype: str  # the dtype the matmuls run in (weight-only formats dequantize to bf16)
    source: str
    embedding_bits: Fraction = Fraction(16)
    lm_head_bits: Fraction = Fraction(16)
    other_bits: Fraction = Fraction(16)  # norms, biases, router, sinks
    more_bits: Fraction | None = None  # GGUF *_M: attn_v and ffn_down in the use_more_bits layers

    @property
    def weight_only(self) -> bool:
        return self.compute_dtype == "bf16"


_GGUF = "ggml/src/ggml-common.h block structs; mixes from llama.cpp src/llama-quant.cpp llama_tensor_get_type"
_Q6K = Fraction(210 * 8, 256)


def _gguf(key: str, bits: Fraction, arithmetic: str, more_bits: Fraction | None = None) -> QuantFormat:
    return QuantFormat(
        key, bits, arithmetic, "linear", "bf16", _GGUF, bits, _Q6K if key != "q8_0" else bits, Fraction(32), more_bits
    )


def gptq_bits(group_size: int) -> Fraction:
    """4 + (fp16 scale + 4-bit zero point) / group: AutoGPTQ's qweight/scales/qzeros per group."""
    return Fraction(4) + Fraction(16 + 4, require_int("group_size", group_size))


_GPTQ = "AutoGPTQ / AutoAWQ checkpoints: int4 qweight, fp16 scales and int4-packed qzeros per group"
FORMATS: dict[str, QuantFormat] = {
    f.key: f
    for f in [
        QuantFormat("gptq-int4-g128", gptq_bits(128), "4 + (16 + 4)/128", "linear", "bf16", _GPTQ),
        QuantFormat("gptq-int4-g32", gptq_bits(32), "4 + (16 + 4)/32", "linear", "bf16", _GPTQ),
        QuantFormat("awq-int4-g128", gptq_bits(128), "4 + (16 + 4)/128", "linear", "bf16", _GPTQ),
        QuantFormat(
            "mxfp4", Fraction(17, 4), "4 + 8/32 (E8M0 scale per 32)", "linear", "bf16", "OCP MX spec v1.0 sec. 5"
        ),
        QuantFormat(
            "mxfp4-experts",
            Fraction(17, 4),
            "4 + 8/32 on the routed experts, bf16 elsewhere",
            "experts",
            "bf16",
            "OCP MX spec v1.0; GPT-OSS model card arXiv:2508.10925 sec. 2 (MoE weights in MXFP4)",
        ),
        QuantFormat("nvfp4", Fraction(9, 2), "4 + 8/16 (E4M3 scale per 16)", "linear", "bf16", "NVIDIA NVFP4 (2025)"),
        QuantFormat(
            "fp8",
            Fraction(8),
            "8 (+ one fp32 per tensor)",
            "linear",
            "fp8",
            "W8A8 fp8 per-tensor (vLLM --quantization fp8, TensorRT-LLM/ModelOpt FP8: the embedding and lm_head "
            "stay 16-bit)",
        ),
        QuantFormat(
            "int8-w8a8",
            Fraction(8),
            "8 (+ one scale per output channel, < 0.1%, not counted)",
            "linear",
            "int8",
            "W8A8 int8 (SmoothQuant, arXiv:2211.10438; compressed-tensors w8a8 checkpoints: int8 weight, "
            "per-channel scale; the embedding and lm_head stay 16-bit)",
        ),
        QuantFormat(
            "fp8-block128",
            Fraction(8) + Fraction(32, 128 * 128),
            "8 + 32/(128·128)",
            "linear",
            "fp8",
            "DeepSeek-V3 arXiv:2412.19437 sec. 3.3.2 (128x128 weight blocks, fp32 scale)",
        ),
        _gguf("q8_0", Fraction(34 * 8, 32), "34 bytes per 32"),
        _gguf("q6_k", _Q6K, "210 bytes per 256"),
        _gguf("q5_k_m", Fraction(176 * 8, 256), "Q5_K 176 bytes per 256; Q6_K mix", more_bits=_Q6K),
        _gguf("q4_k_m", Fraction(144 * 8, 256), "Q4_K 144 bytes per 256; Q6_K mix", more_bits=_Q6K),
        _gguf("q5_k_m-2023", Fraction(176 * 8, 256), "as q5_k_m, llama.cpp's mix before 2024", more_bits=_Q6K),
        _gguf("q4_k_m-2023", Fraction(144 * 8, 256), "as q4_k_m, llama.cpp's mix before 2024", more_bits=_Q6K),
        _gguf("q4_0", Fraction(18 * 8, 32), "18 bytes per 32"),
    ]
}


def get_format(key: str) -> QuantFormat:
    return FORMATS[require_choice("quant", key, FORMATS)]


def attention_matrix_params(cfg: ModelConfig) -> int:
    """The attention projections' weight matrices of one layer, biases left out."""
    d, h = cfg.d_model, cfg.n_heads
    out = h * cfg.v_head_width * d
    if not cfg.is_mla:
        return d * cfg.q_width + 2 * d * cfg.kv_width + out
    q = d * cfg.q_lora_rank + cfg.q_lora_rank * h * cfg.qk_head_width if cfg.q_lora_rank else d * h * cfg.qk_head_width
    kv = d * (cfg.kv_lora_rank + cfg.qk_rope_head_dim) + cfg.kv_lora_rank * h * (cfg.qk_nope_head_dim + cfg.v_head_dim)
    if cfg.has_indexer:  # DSA's indexer: wq_b, wk, weights_proj (its LayerNorm is not a matrix)
        kv += cfg.index_heads * (cfg.q_lora_rank * cfg.index_head_dim + d) + d * cfg.index_head_dim
    return q + kv + out


def value_matrix_params(cfg: ModelConfig) -> int:
    """attn_v of one layer (GGUF's mix upgrades it); MLA has no separate V matrix: 0."""
    return 0 if cfg.is_mla else cfg.d_model * cfg.kv_width


def mlp_matrix_params(cfg: ModelConfig, width: int) -> int:
    """up (+ gate) + down weight matrices of an MLP of `width`, biases left out."""
    return (3 if cfg.gated_mlp else 2) * cfg.d_model * width


def routed_expert_matrix_params(cfg: ModelConfig) -> int:
    """E experts' matrices in every MoE layer."""
    return cfg.n_moe_layers * cfg.n_experts * mlp_matrix_params(cfg, cfg.expert_ff) if cfg.is_moe else 0


def block_matrix_params(cfg: ModelConfig) -> int:
    """Every matmul weight inside the blocks: attention, dense MLPs, routed and shared experts."""
    dense = cfg.n_dense_layers * mlp_matrix_params(cfg, cfg.d_ff)
    shared = cfg.n_moe_layers * mlp_matrix_params(cfg, cfg.n_shared_experts * cfg.shared_ff) if cfg.is_moe else 0
    return cfg.n_layers * attention_matrix_params(cfg) + dense + shared + routed_expert_matrix_params(cfg)


def _down_matrix_params(cfg: ModelConfig, moe_layer: bool) -> int:
    if moe_layer:
        return (cfg.n_experts * cfg.expert_ff + cfg.n_shared_experts * cfg.shared_ff) * cfg.d_model
    return cfg.d_ff * cfg.d_model


@dataclass(frozen=True)
class QuantizedWeights:
    """Bytes of the weights in one format, by the width they are stored in."""

    format: QuantFormat
    quantized_params: int
    upgraded_params: int  # GGUF mixes: stored at another type than the base (kquant.py)
    embedding_params: int
    lm_head_params: int
    other_params: int
    bytes: int

    @property
    def bits_per_weight(self) -> float:
        """The average over all parameters (what GGUF tools print as bpw)."""
        total = self.quantized_params + self.upgraded_params + self.embedding_params
        return self.bytes * 8 / (total + self.lm_head_params + self.other_params)


def _mix_overrides(cfg: ModelConfig, fmt: QuantFormat) -> list[tuple[int, Fraction]]:
    """The GGUF mix's tensors at another type than the base (kquant.py); none for other formats."""
    if fmt.source != _GGUF:
        return []
    d = cfg.d_model
    key_matrix = 0 if cfg.is_mla else d * cfg.kv_width  # attn_k: d x (h_kv·d_h)
    output = cfg.n_heads * cfg.v_head_width * d

    def down(layer: int) -> int:
        return _down_matrix_params(cfg, cfg.is_moe and layer >= cfg.n_layers - cfg.n_moe_layers)

    return kquant_overrides(cfg, fmt.key, value_matrix_params(cfg), key_matrix, output, down)


def quantized_weights(cfg: ModelConfig, fmt: QuantFormat | str) -> QuantizedWeights:
    """All N parameters stored as `fmt` stores them: the quantized matrices at fmt.bits, the
    mix's upgraded tensors at more_bits, the token table, lm_head and the rest at their widths."""
    fmt = get_format(fmt) if isinstance(fmt, str) else fmt
    quantized = routed_expert_matrix_params(cfg) if fmt.scope == "experts" else block_matrix_params(cfg)
    overrides = _mix_overrides(cfg, fmt)
    upgraded = sum(n for n, _ in overrides)
    quantized -= upgraded
    embedding = P.embedding_params(cfg)
    lm_head = P.lm_head_params(cfg)
    other = P.total_params(cfg) - quantized - upgraded - embedding - lm_head
    bits = (
        quantized * fmt.bits
        + sum(n * b for n, b in overrides)
        + embedding * fmt.embedding_bits
        + lm_head * fmt.lm_head_bits
        + other * fmt.other_bits
    )
    return QuantizedWeights(
        fmt, quantized, upgraded, embedding, lm_head, other, ceil_div(bits.numerator, 8 * bits.denominator)
    )


# A plain 8-bit weight dtype is served as the format every engine stores it in: W8A8 with the
# token table and lm_head kept 16-bit (no engine quantizes them). int4 stays the plain count.
DEPLOYED_AS = {"fp8": "fp8", "int8": "int8-w8a8"}


def weight_format(weights: str) -> QuantFormat | None:
    """The deployed format `weights` names (a format key, or fp8/int8 as DEPLOYED_AS); None for a
    plain dtype counted at its width (bf16, fp16, fp32, int4)."""
    key = DEPLOYED_AS.get(weights, weights)
    return FORMATS.get(key)


def deployed_weights_bytes(cfg: ModelConfig, weights: str) -> int:
    """The one weight-bytes function of inference and serving: all N parameters as `weights`
    stores them, a format's bytes (scales and 16-bit tensors included; fp8 and int8 as their W8A8
    formats), else N x the dtype's width."""
    fmt = weight_format(weights)
    if fmt is not None:
        return quantized_weights(cfg, fmt).bytes
    bits = DTYPE_BITS[require_choice("weights", weights, (*DTYPE_BITS, *FORMATS))]
    return ceil_div(P.total_params(cfg) * bits, 8)


def plain_dtype_note(dtype: str) -> str | None:
    """What a bare --weight-dtype int4 assumes, said in the output: no scales, nothing in 16 bits."""
    if dtype in DEPLOYED_AS:
        return (
            f"--weight-dtype {dtype} is served as the {DEPLOYED_AS[dtype]} format: block matmuls at 8 bits, the "
            "token table and lm_head 16-bit (as vLLM, SGLang and TensorRT-LLM keep them)"
        )
    if dtype == "int4":
        return (
            "--weight-dtype int4 counts every parameter at exactly 4 bits, no scales or "
            "zero points and no 16-bit tensors; --quant names a deployed format (e.g. gptq-int4-g128, q4_k_m)"
        )
    return None


def quant_note(cfg: ModelConfig, quant: str) -> str | None:
    """What a format's bytes assume, where the same name has meant two files: an MoE model's
    K-quant mix changed in llama.cpp in January 2024 (kquant.py)."""
    if cfg.is_moe and quant in ("q4_k_m", "q5_k_m"):
        older = quantized_weights(cfg, f"{quant}-2023").bytes
        return (
            f"{quant} as llama.cpp mixes it since January 2024 (ffn_down in Q6_K in the use_more_bits layers); files "
            f"made before, such as the first Mixtral-8x7B GGUFs, hold {older / 1e9:.2f} GB: --quant {quant}-2023"
        )
    return None
