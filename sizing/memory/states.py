"""Model states: bytes of weights, gradients and optimizer states per precision policy and
optimizer, and their ZeRO / FSDP sharding over dp ranks.

bf16 mixed precision with AdamW is 2 + 2 + 12 = 16 bytes per parameter: Rajbhandari et al.
2020 (ZeRO, arXiv:1910.02054, section 3.1: "2Ψ + 2Ψ + KΨ" with K = 12 for the fp32 master
weights, momentum and variance), which Megatron-LM and DeepSpeed use. Megatron-LM with fp32
gradient-accumulation buffers (its default for --bf16) keeps 4-byte gradients, 18 bytes per
parameter unsharded, 6 + 12/d under its distributed optimizer (docs/source/distrib_optimizer.md);
`grad_bytes` below takes a stack's gradient buffer size (sizing.parallel.memory_stack). ZeRO
stage 1 shards the optimizer states, 2 also the gradients, 3 also the weights; FSDP FULL_SHARD
is stage 3, SHARD_GRAD_OP stage 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sizing.formulas import params as P
from sizing.inputs import ModelConfig
from sizing.validate import require_choice
from sizing.vocabulary import DTYPE_BITS, PRECISION_POLICIES, ceil_div
from sizing.vocabulary import OPTIMIZER_ALIASES as VOCABULARY_OPTIMIZER_ALIASES

# ---------------------------------------------------------------- element sizes
FP32_BYTES = DTYPE_BITS["fp32"] // 8  # softmax/log-softmax outputs, norm statistics, logsumexp: kept in fp32
INDEX_BYTES = 8  # int64 token ids and indices saved by embedding, topk, indexing, nll_loss


# ---------------------------------------------------------------- precision and optimizer
@dataclass(frozen=True)
class Precision:
    key: str
    weight_bytes: int  # per parameter: the copy forward and backward read
    grad_bytes: int  # per parameter
    master_bytes: int  # per parameter: fp32 master copy held by the optimizer (0: weights are the master)
    state_bytes: int  # per optimizer state element (AdamW m and v, SGD momentum)
    activation_bytes: int  # a: bytes per activation element (the compute dtype)
    description: str


_MIXED = (
    "{0} weights and gradients for compute; fp32 master weights and optimizer states "
    "(ZeRO paper 2Ψ + 2Ψ + 12Ψ for Adam; Megatron-LM / DeepSpeed accounting)"
)
# One entry per name in sizing.vocabulary.PRECISION_POLICIES, in that order (a test checks it).
PRECISIONS: dict[str, Precision] = {
    "fp32": Precision("fp32", 4, 4, 0, 4, 4, "fp32 weights, gradients, optimizer states and activations"),
    "bf16-mixed": Precision("bf16-mixed", 2, 2, 4, 4, 2, _MIXED.format("bf16")),
    "fp16-mixed": Precision(
        "fp16-mixed", 2, 2, 4, 4, 2, _MIXED.format("fp16") + "; loss scaling adds no per-parameter bytes"
    ),
    "bf16": Precision(
        "bf16", 2, 2, 0, 2, 2, "pure bf16: weights, gradients and optimizer states in bf16, no master copy"
    ),
    # fp8 training as Transformer Engine runs it: the parameters stay bf16 (2 B) with bf16 gradients, fp32
    # master weights and states; the fp8 copies TE keeps of each GEMM weight (data + transpose on Hopper)
    # are their own term (sizing.memory.fp8), on the GEMM weights only (not embeddings, norms, lm_head).
    # Activations are bf16 (2 B) except where a stack's fp8 GEMMs save their inputs in fp8.
    "fp8": Precision(
        "fp8",
        2,
        2,
        4,
        4,
        2,
        "fp8 GEMMs (Transformer Engine): bf16 weights plus the fp8 copies TE keeps of each GEMM weight (data + "
        "transpose), bf16 gradients, fp32 master weights and optimizer states; activations bf16 except the "
        "GEMM inputs a Transformer Engine stack saves in fp8",
    ),
}


@dataclass(frozen=True)
class Optimizer:
    key: str
    states: int  # per-parameter state tensors
    description: str


ADAM8BIT_BLOCK = 2048  # bitsandbytes block-wise quantisation block (Dettmers et al. 2022, arXiv:2110.02861)
OPTIMIZERS: dict[str, Optimizer] = {
    "adamw": Optimizer("adamw", 2, "AdamW: first and second moments m, v (Loshchilov & Hutter 2019)"),
    "sgd": Optimizer("sgd", 1, "SGD with momentum: one momentum buffer"),
    "adam8bit": Optimizer(
        "adam8bit",
        2,
        f"8-bit AdamW (bitsandbytes): m, v in 1 byte each + one fp32 absmax per "
        f"{ADAM8BIT_BLOCK}-element block per state (Dettmers et al. 2022)",
    ),
}
OPTIMIZER_ALIASES = VOCABULARY_OPTIMIZER_ALIASES  # the CLI accepts these (sizing.vocabulary)


def get_precision(key: str) -> Precision:
    return PRECISIONS[require_choice("precision", key, PRECISION_POLICIES)]


def get_optimizer(key: str) -> Optimizer:
    return OPTIMIZERS[require_choice("optimizer", key, OPTIMIZERS)]


def weights_bytes(n_params: int, precision: str) -> int:
    """N x weight bytes: the copy the forward reads (bf16 under mixed precision)."""
    return n_params * get_precision(precision).weight_bytes


def gradients_bytes(n_params: int, precision: str, grad_bytes: int | None = None) -> int:
    """N x gradient bytes: one gradient per parameter (.grad, or Megatron's main_grad buffer of
    `grad_bytes` per element; None: the precision's)."""
    return n_params * (get_precision(precision).grad_bytes if grad_bytes is None else grad_bytes)


def optimizer_state_bytes(n_params: int, precision: str, optimizer: str, moment_bytes: int | None = None) -> int:
    """The optimizer's own states: states x N x state bytes; 8-bit Adam: 2 x (N x 1 byte +
    4 bytes per 2048-element block). torch.optim also keeps a 4-byte `step` per parameter
    tensor (bookkeeping, not counted; the probe lists it). moment_bytes: a stack's state element
    size (DeepSeek-V3's BF16 AdamW moments: 2; None: the precision's)."""
    opt = get_optimizer(optimizer)
    if opt.key == "adam8bit":
        return opt.states * (n_params + FP32_BYTES * ceil_div(n_params, ADAM8BIT_BLOCK))
    return opt.states * n_params * (get_precision(precision).state_bytes if moment_bytes is None else moment_bytes)


def master_weights_bytes(n_params: int, precision: str) -> int:
    """fp32 master copy under mixed precision (4N), none otherwise."""
    return n_params * get_precision(precision).master_bytes


def optimizer_bytes(n_params: int, precision: str, optimizer: str, moment_bytes: int | None = None) -> int:
    """What ZeRO calls optimizer states: master weights + the optimizer's states.
    bf16-mixed AdamW: 4N + 8N = 12N; with BF16 moments (moment_bytes 2) 4N + 4N = 8N."""
    states = optimizer_state_bytes(n_params, precision, optimizer, moment_bytes)
    return master_weights_bytes(n_params, precision) + states


# ---------------------------------------------------------------- ZeRO / FSDP
ZERO_STAGES: dict[int, tuple[str, ...]] = {  # stage -> the model states it shards (Rajbhandari et al. 2020)
    0: (),
    1: ("optimizer",),
    2: ("optimizer", "gradients"),
    3: ("optimizer", "gradients", "weights"),
}


def shard_bytes(n_bytes: int, dp: int) -> int:
    """One rank's share of a state sharded over dp ranks (rounded up: flat buffers are padded)."""
    return ceil_div(n_bytes, dp)


@lru_cache(maxsize=256)  # the fit searches ask it for every dp they try
def largest_unit_params(cfg: ModelConfig) -> int:
    """Parameters of the largest unit ZeRO-3/FSDP gathers at once: a transformer block (all
    its experts), the token embedding or the lm_head."""
    return max(
        P.layer_params(cfg), P.token_embedding_params(cfg) + P.position_embedding_params(cfg), P.lm_head_params(cfg)
    )


def zero3_gathered_bytes(cfg: ModelConfig, precision: str, dp: int) -> int:
    """ZeRO-3 working set: one unit's full weights gathered and its full gradients before the
    reduce-scatter, (weight + gradient bytes) x largest unit. DeepSpeed's
    estimate_zero3_model_states_mem_needs uses 4 x largest_layer_params (fp16 + fp16).
    0 without sharding (dp 1)."""
    if dp <= 1:
        return 0
    prec = get_precision(precision)
    return (prec.weight_bytes + prec.grad_bytes) * largest_unit_params(cfg)


def model_states_per_gpu(
    n_params: int,
    precision: str,
    optimizer: str,
    zero: int,
    dp: int,
    grad_bytes: int | None = None,
    moment_bytes: int | None = None,
) -> dict[str, int]:
    """Weights, gradients and optimizer states on one rank: the parts ZERO_STAGES[zero] names
    divided by dp (rounded up), the rest whole. grad_bytes, moment_bytes: the gradient buffer's
    and the optimizer moments' element sizes (None: the precision's)."""
    sharded = ZERO_STAGES[zero]

    def on_one_rank(part: str, n_bytes: int) -> int:
        return shard_bytes(n_bytes, dp if part in sharded else 1)

    return {
        "weights_bytes": on_one_rank("weights", weights_bytes(n_params, precision)),
        "gradients_bytes": on_one_rank("gradients", gradients_bytes(n_params, precision, grad_bytes)),
        "optimizer_bytes": on_one_rank("optimizer", optimizer_bytes(n_params, precision, optimizer, moment_bytes)),
    }
