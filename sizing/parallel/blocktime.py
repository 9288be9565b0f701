"""One block's and the head's time for one micro-batch on one rank, and what they depend on: the
hardware a layout and a stack give an operation (peaks, HBM, links, kernels), the parameters each
block holds and trains. Memoised on the few layout fields a block's time depends on, so that
the layout search re-uses them across dp, pp and sharding."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from sizing.formulas import params as P
from sizing.inputs import ModelConfig, get_gpu
from sizing.parallel import eager
from sizing.parallel.finetune import adapted, lora_adapter_params
from sizing.parallel.gemm import linear_train_seconds
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.links import group_link
from sizing.parallel.mixer_ops import hybrid_block_params, hybrid_block_times
from sizing.parallel.mixers import hybrid_kinds
from sizing.parallel.ops import ACT_BYTES, Hardware, Times, block_times, recompute_times
from sizing.parallel.shapes import block_tensors
from sizing.parallel.stepdata import gpu_constants, moe_comm_sms, moe_load_factor, nccl_all_to_all_slowdown, stack
from sizing.parallel.towers import vision_tensors
from sizing.validate import SizingError
from sizing.vision import tower_config, vision_of

# Bytes per logit element of the cross-entropy over the vocabulary, forward + backward:
# fused (Megatron-Core / Transformer Engine cross_entropy_loss_fusion, flash-attn's xentropy
#   kernel, Liger): read the bf16 logits once forward (2), read and write them once backward (4) = 6;
# eager (torch F.cross_entropy on logits upcast to fp32, as torchtitan and Megatron-LM 2021 do):
#   upcast (read 2, write 4), log-softmax (read 4 for the max, read 4 for the sum of exps, write 4),
#   its backward (read 4, write 4), downcast of the gradient (read 4, write 2) = 32.
LOSS_BYTES = {"fused": 6, "eager": 32}
ADAPTED_LINEARS = {"qkv": ("q", "k", "v"), "o": ("o",), "up": ("up", "gate"), "down": ("down",)}


@lru_cache(maxsize=64)
def stack_of(opts):
    """The stack's properties, with the gradient reduction dtype a run states in place of the stack's."""
    st = stack(opts.stack)
    return st if opts.grad_bytes is None else replace(st, grad_bytes=opts.grad_bytes)


@lru_cache(maxsize=64)
def gpu_of(gpu_key: str):
    return get_gpu(gpu_key)


@lru_cache(maxsize=4096)
def _link(gpu_key: str, size: int, stride: int, node: int, nvlink_gbs, network_gbs):
    return group_link(gpu_of(gpu_key), gpu_constants(gpu_key), size, stride, node, nvlink_gbs, network_gbs)


def link_for(gpu_key: str, size: int, stride: int, node: int, opts):
    return _link(gpu_key, size, stride, node, opts.nvlink_gbs, opts.network_gbs)


def block_layout(layout: ParallelLayout) -> ParallelLayout:
    """The fields one block's time depends on (tp, cp, ep, SP, micro-batch, node size, what
    trains), so that layouts differing only in dp, pp, v or sharding share the cached times."""
    return _mini(
        layout.tp,
        layout.cp,
        layout.ep,
        layout.sequence_parallel,
        layout.micro_batch,
        layout.gpus_per_node,
        layout.finetune,
        layout.lora_rank,
        layout.lora_targets,
        layout.etp,
    )


@lru_cache(maxsize=1024)
def _mini(tp, cp, ep, sp, b, node, finetune, rank, targets, etp=1) -> ParallelLayout:
    return ParallelLayout(
        dp=ep * etp,  # enough ranks for the expert grid: ep x etp divides tp x cp x dp
        tp=tp,
        cp=cp,
        ep=ep,
        etp=etp,
        sequence_parallel=sp,
        micro_batch=b,
        gpus_per_node=node,
        finetune=finetune,
        lora_rank=rank,
        lora_targets=targets,
    )


def expert_stride(layout: ParallelLayout, opts) -> int:
    """How far apart the ep group's ranks lie: etp under Megatron-Core's folded expert order
    tp-ep-dp (v0.10+, arXiv:2504.14960), tp x cp under the earlier order tp-cp-ep-dp, where an
    ep group with context parallelism leaves the node sooner (the paper's Fig. 6)."""
    return layout.tp * layout.cp if opts.unfolded_experts else layout.etp


@lru_cache(maxsize=1024)
def hardware(gpu_key: str, layout: ParallelLayout, opts) -> Hardware:
    gpu = gpu_of(gpu_key)
    consts = gpu_constants(gpu.key)
    act_dtype = "bf16" if "bf16" in gpu.peak_tflops else "fp16"
    gemm_dtype = "fp8" if opts.precision == "fp8" else act_dtype
    if gemm_dtype not in gpu.peak_tflops:
        raise SizingError(f"precision fp8 needs an fp8 peak; gpu {gpu.key} has: {', '.join(gpu.peak_tflops)}")
    st = stack_of(opts)
    hbm = opts.hbm_tbs * 1e12 if opts.hbm_tbs else gpu.hbm_bytes_per_second
    node = layout.gpus_per_node

    def link(size, stride):
        return group_link(gpu, consts, size, stride, node, opts.nvlink_gbs, opts.network_gbs)

    clock = consts.clock_fraction(opts.power_limit_w)
    lora = layout.finetune != "full"
    return Hardware(
        consts,
        gpu.peak_flops_per_second(act_dtype) * clock,
        gpu.peak_flops_per_second(gemm_dtype) * clock,
        gemm_dtype,
        hbm * consts.hbm_fraction,
        link(layout.tp, 1),
        link(layout.cp, layout.tp),
        link(layout.ep, expert_stride(layout, opts)),
        opts.flash_kernel or st.flash,
        st.elementwise == "eager",
        gpu.peak_flops_per_second(act_dtype) / consts.exp_per_second,
        st.fp8_recipe == "current",
        lora,
        layout.lora_rank if lora else 0,
        tuple(k for k, names in ADAPTED_LINEARS.items() if lora and set(names) & set(layout.lora_targets)),
        layout.finetune == "qlora",
        st.tp_overlap,
        opts.ep_overlap or st.ep_overlap,
        link(layout.etp, 1),
        moe_comm_sms(),
        st.fp8_dispatch and gemm_dtype == "fp8",
        opts.routed_groups or 0,
        nccl_all_to_all_slowdown() if st.ep_kernels == "nccl" else 1.0,
    )


@lru_cache(maxsize=1024)
def block_params(cfg: ModelConfig, moe: bool, tp: int, ep: int, etp: int = 1) -> float:
    """Parameters of one block on one rank: attention, dense MLP and shared experts over tp,
    routed experts over ep x etp (Megatron-Core's expert grid). A hybrid layer's: its tensors."""
    if isinstance(moe, tuple):
        return hybrid_block_params(cfg, moe, tp, ep, etp)
    attn = cfg.d_model * (cfg.q_width + 2 * cfg.kv_width) + cfg.q_width * cfg.d_model
    if not moe:
        return (attn + P.mlp_params(cfg, cfg.d_ff)) / tp
    routed = cfg.n_experts * P.expert_params(cfg) / (ep * etp)
    return (attn + P.shared_expert_params(cfg)) / tp + routed + P.router_params(cfg)


@lru_cache(maxsize=1024)
def routed_block_params(cfg: ModelConfig, ep: int, etp: int) -> float:
    """Routed-expert parameters of one MoE block on one rank: E experts over ep x etp."""
    return cfg.n_experts * P.expert_params(cfg) / (ep * etp)


def expert_dp_stride(layout: ParallelLayout, opts) -> int:
    """How far apart the expert-data-parallel ranks lie: etp x ep in the folded order tp-ep-dp,
    tp x cp x ep in the earlier tp-cp-ep-dp (expert_stride)."""
    return expert_stride(layout, opts) * layout.ep


@lru_cache(maxsize=1024)
def trainable_block_params(cfg: ModelConfig, moe: bool, mini: ParallelLayout) -> float:
    """Parameters of one block that train on one rank: all of them, or LoRA's adapters."""
    if mini.finetune == "full":
        return block_params(cfg, moe, mini.tp, mini.ep, mini.etp)
    tensors = block_tensors(cfg, moe)
    return sum(lora_adapter_params(t, mini.lora_rank, mini.tp) for t in tensors if adapted(t, mini.lora_targets))


def moe_factor(opts) -> float:
    return moe_load_factor() if opts.capacity_factor is None else opts.capacity_factor


@lru_cache(maxsize=4096)
def per_block(cfg, mini: ParallelLayout, seq_len, gpu_key, recompute, opts, moe: bool) -> dict:
    """{kind: seconds} of one block for one micro-batch: forward + backward + recompute."""
    st = stack_of(opts)
    dropout = st.dropout if opts.dropout is None else opts.dropout
    hw = hardware(gpu_key, mini, opts)
    times = hybrid_block_times if isinstance(moe, tuple) else block_times  # a hybrid's layer kind
    f, b = times(cfg, mini, hw, seq_len, moe, opts.attention_kernel, dropout, moe_factor(opts), opts.document_tokens)
    out = Times()
    for part in (f, b):
        for k, sec in part.by_kind.items():
            out.add(k, sec)
    out.add("recompute", recompute_times(f, recompute, opts.attention_kernel, st.selective).total())
    # eager launches run ahead of the GPU asynchronously; they cost time only where the block's
    # kernels (forward, and about twice as many backward) take less than their launches
    launches = 3 * eager.kernels_per_block(cfg) * st.kernel_launch_s
    out.add("memory", max(0.0, launches - out.total()))
    return out.by_kind


@lru_cache(maxsize=1024)
def head_seconds(cfg, mini: ParallelLayout, seq_len, gpu_key, opts) -> tuple[float, float, float]:
    """(embedding memory, lm_head GEMMs, loss memory) seconds per micro-batch. The lm_head stays in
    bf16 under fp8 training (Transformer Engine keeps it out of fp8) and is frozen under LoRA; the
    loss moves the stack's bytes per logit (LOSS_BYTES)."""
    hw = hardware(gpu_key, mini, opts)
    t, vocab = mini.micro_batch * seq_len // mini.cp, cfg.padded_vocab // mini.tp
    dtype = "bf16" if hw.gemm_dtype == "fp8" else hw.gemm_dtype
    hbm = hw.hbm_bytes_per_second
    f, b = linear_train_seconds(t, vocab, cfg.d_model, hw.peak, hw.consts, dtype, 1, hbm, not hw.frozen_base)
    embedding = 3 * t * cfg.d_model * ACT_BYTES / hbm  # gather, its gradient scatter-add
    loss = LOSS_BYTES[stack_of(opts).loss] * t * vocab / hbm
    return embedding, f + b, loss


@lru_cache(maxsize=1024)
def tower_seconds(cfg, mini: ParallelLayout, gpu_key, recompute, opts) -> tuple[dict, float]:
    """A vision-language model's tower and projector on the first stage for one micro-batch: ({kind:
    seconds} of its blocks, forward + backward + recompute, each pass of patches a sequence of the
    micro-batch; the language model's attention kernel at the tower's patches, so its bidirectional
    attention is timed as causal, half its pairs), and its parameters on one rank. Empty for any
    other model."""
    vision = vision_of(cfg)
    if vision is None or cfg.tower_runs()[0] == 0:
        return {}, 0.0
    runs, patches = cfg.tower_runs()
    tower = tower_config(vision)
    per = per_block(tower, replace(mini, micro_batch=runs * mini.micro_batch), patches, gpu_key, recompute, opts, False)
    params = 0.0
    for tensor in vision_tensors(vision):
        n = tensor.copies
        for size in tensor.tp_local_shape(mini.tp):
            n *= size
        params += n
    return {kind: tower.n_layers * seconds for kind, seconds in per.items()}, params


@lru_cache(maxsize=1024)
def stage_kind_counts(cfg: ModelConfig, split: tuple[int, ...]) -> tuple[tuple[tuple, int], ...]:
    """((kind, blocks), ...) on each pipeline stage: a stack's dense then MoE blocks (kinds False,
    True), a hybrid's kinds of layer."""
    if getattr(cfg, "hybrid", None) is None:
        return tuple(((False, n - moe), (True, moe)) for n, moe in zip(split, moe_counts(cfg, split), strict=True))
    starts = [sum(split[:i]) for i in range(len(split))]
    return tuple(tuple(hybrid_kinds(cfg, range(s, s + n))) for s, n in zip(starts, split, strict=True))


@lru_cache(maxsize=1024)
def moe_counts(cfg: ModelConfig, split: tuple[int, ...]) -> tuple[int, ...]:
    """MoE blocks on each pipeline stage."""
    out, start = [], 0
    for n in split:
        out.append(sum(1 for i in range(start, start + n) if cfg.is_moe_layer(i)) if cfg.is_moe else 0)
        start += n
    return tuple(out)
