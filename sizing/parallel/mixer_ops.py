"""A hybrid layer's forward and backward seconds for one micro-batch on one rank, on the per-operation
model of sizing.parallel.ops: its attention (ops.py's projections and kernel, Qwen3-Next's output gate
one more column-parallel projection) or its state mixer, its dense MLP or MoE (ops.py, moe_ops.py) or
none, its norms and residual adds, its TP collectives (one per residual branch each way).

The state mixers (an estimate: no kernel of theirs is measured in sizing/data/step_time.json):
* projections (in_proj / out_proj, DeltaNet's in_proj_qkvz and in_proj_ba, KDA's q, k, v, gates
  and o_proj) as the block linears of ops.py, column- and row-parallel over tp;
* the chunked scans as the batched matmuls their kernels run, timed by sizing.parallel.gemm at their
  shapes (the GPU's fitted GEMM model, not a measurement of these kernels): Mamba-2's SSD is four per
  chunk (Dao & Gu 2024, arXiv:2405.21060 sec. 6: C·Bᵀ per group, its product with x, the chunk
  states Bᵀ·x and the read-out of the carried state, per head), the chunked delta rule eight
  (Yang et al. 2024, arXiv:2412.06464: K·Kᵀ, the WY products T·K and T·V, Q·Kᵀ, its product with
  the new values, w·S, q·S and the state update Kᵀ·v, per head; KDA's are the same with d_k = d_v);
  Mamba-1's selective scan has no matmul form and is counted as its memory traffic;
* the scans' elementwise work (decays, cumulative sums, the chunk states passed between chunks in
  fp32) and the short convolution as HBM traffic;
* backward: twice the forward's matmuls, plus one forward of the scan and the conv, which the
  memory-efficient kernels recompute (mamba_split_conv1d_scan_combined; fla's chunk kernels
  recompute w, u and the states).
"""

from __future__ import annotations

from sizing.hybrid import GatedDeltaNet, KimiDeltaAttention, Mamba2Mixer, hybrid_of
from sizing.inputs import ModelConfig
from sizing.parallel.gemm import gemm_seconds
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.mixers import ATTENTION_MIXERS, STATE_MIXERS, sublayers
from sizing.parallel.moe_ops import ep_exposed, experts
from sizing.parallel.ops import attention_core, attention_projections, elementwise_bytes, mlp, softmax_bytes, tp_comm
from sizing.parallel.ops_base import ACT_BYTES, Hardware, Times, add_linear, add_memory
from sizing.parallel.shapes import block_tensors
from sizing.vocabulary import ceil_div

STATE_BYTES = 4  # the chunk states kernels pass between chunks are fp32


def scan_gemms(mixer, b: int, T: int, tp: int) -> list[tuple[int, int, int, int]]:
    """(m, n, k, count) of the batched matmuls one forward of the chunked scan runs on a rank, for b
    sequences of T tokens (module docstring)."""
    chunks = b * ceil_div(T, mixer.chunk)
    Q = mixer.chunk
    if isinstance(mixer, Mamba2Mixer):
        H, P, N = mixer.n_heads // tp, mixer.head_dim, mixer.d_state
        G = mixer.n_groups // tp if mixer.n_groups % tp == 0 else 1
        return [(Q, Q, N, chunks * G), (Q, P, Q, chunks * H), (N, P, Q, chunks * H), (Q, P, N, chunks * H)]
    if isinstance(mixer, KimiDeltaAttention):
        H, dk, dv = mixer.n_heads // tp, mixer.head_dim, mixer.head_dim
    else:
        H, dk, dv = mixer.n_v_heads // tp, mixer.d_k, mixer.d_v
    c = chunks * H  # K·Kᵀ, T·K, T·V, Q·Kᵀ, its product with v, w·S, q·S, Kᵀ·v
    shapes = [(Q, Q, dk), (Q, dk, Q), (Q, dv, Q), (Q, Q, dk), (Q, dv, Q), (Q, dv, dk), (Q, dv, dk), (dk, dv, Q)]
    return [(m, n, k, c) for m, n, k in shapes]


def scan_traffic_bytes(mixer, t: int, tp: int) -> float:
    """HBM bytes one forward of the scan moves on a rank for t tokens beyond its matmuls: its inputs
    read and output written, and the fp32 chunk states written and read once per chunk."""
    if isinstance(mixer, Mamba2Mixer):
        io = 2 * mixer.d_inner + 2 * mixer.n_groups * mixer.d_state + mixer.n_heads
        states = mixer.n_heads * mixer.head_dim * mixer.d_state
    elif isinstance(mixer, KimiDeltaAttention):
        io = 5 * mixer.width + mixer.n_heads  # q, k, v, the per-channel gate, o; beta
        states = mixer.n_heads * mixer.head_dim * mixer.head_dim
    elif isinstance(mixer, GatedDeltaNet):
        io = 2 * mixer.key_dim + 2 * mixer.value_dim + 2 * mixer.n_v_heads  # q, k, v, o; g, beta
        states = mixer.n_v_heads * mixer.d_k * mixer.d_v
    else:  # Mamba-1's selective scan: u, delta, z, B, C read, the output written
        return t * (4 * mixer.d_inner / tp + 2 * mixer.d_state) * ACT_BYTES
    per_chunk = 2 * states * STATE_BYTES / mixer.chunk
    return t * (io * ACT_BYTES + per_chunk) / tp


def _projections(mixer, hw: Hardware, fwd: Times, bwd: Times, t: int, tp: int) -> None:
    """The mixer's linears: column-parallel in, row-parallel out (sizing.parallel.mixers)."""
    d = mixer.d_model
    if isinstance(mixer, Mamba2Mixer):
        add_linear(hw, fwd, bwd, t, (mixer.d_inner + mixer.conv_channels + mixer.n_heads) // tp, d)
        add_linear(hw, fwd, bwd, t, d, mixer.d_inner // tp)
    elif isinstance(mixer, GatedDeltaNet):
        add_linear(hw, fwd, bwd, t, (2 * mixer.key_dim + 2 * mixer.value_dim + 2 * mixer.n_v_heads) // tp, d)
        add_linear(hw, fwd, bwd, t, d, mixer.value_dim // tp)
    elif isinstance(mixer, KimiDeltaAttention):
        hd, D = mixer.width, mixer.head_dim
        add_linear(hw, fwd, bwd, t, (3 * hd + mixer.n_heads) // tp, d)  # q, k, v, b
        add_linear(hw, fwd, bwd, t, D, d, 2)  # f_a, g_a: replicated
        add_linear(hw, fwd, bwd, t, hd // tp, D, 2)  # f_b, g_b
        add_linear(hw, fwd, bwd, t, d, hd // tp)
    else:  # Mamba-1
        e, R, N = mixer.d_inner, mixer.dt_rank, mixer.d_state
        add_linear(hw, fwd, bwd, t, 2 * e // tp, d)
        add_linear(hw, fwd, bwd, t, R + 2 * N, e // tp)
        add_linear(hw, fwd, bwd, t, e // tp, R)
        add_linear(hw, fwd, bwd, t, d, e // tp)


def state_mixer_times(mixer, hw: Hardware, fwd: Times, bwd: Times, b: int, T: int, tp: int) -> None:
    """One state mixer for b sequences of T tokens on a rank (module docstring)."""
    t = b * T
    _projections(mixer, hw, fwd, bwd, t, tp)
    scan = 0.0
    if not hasattr(mixer, "dt_rank"):  # Mamba-1 has no matmul form
        for m, n, k, count in scan_gemms(mixer, b, T, tp):
            scan += gemm_seconds(m, n, k, hw.peak, hw.consts, "bf16", count, hw.hbm_bytes_per_second)
    conv = 2 * t * mixer.conv_channels * ACT_BYTES / tp  # the short conv: read and write its channels
    traffic = (scan_traffic_bytes(mixer, t, tp) + conv) / hw.hbm_bytes_per_second
    fwd.add("gemm", scan)
    fwd.add("memory", traffic)
    bwd.add("gemm", 3 * scan)  # 2 x forward + the recomputed forward
    bwd.add("memory", 3 * traffic)


def _scaled(into: Times, part: Times, factor: float) -> None:
    for kind, seconds in part.by_kind.items():
        into.add(kind, factor * seconds)


def hybrid_block_times(
    cfg: ModelConfig,
    layout: ParallelLayout,
    hw: Hardware,
    seq_len: int,
    kind: tuple[str, str],
    kernel: str,
    dropout: bool,
    capacity_factor: float,
    document: int | None = None,
) -> tuple[Times, Times]:
    """(forward, backward) of one hybrid layer of `kind` for one micro-batch on one rank."""
    m, (mixer, ffn) = hybrid_of(cfg), kind
    fwd, bwd = Times(), Times()
    b, tp = layout.micro_batch, layout.tp
    t = b * seq_len
    if mixer in ATTENTION_MIXERS:
        attention_projections(cfg, hw, fwd, bwd, t, tp)
        if m.gated_attention:  # Qwen3-Next's q_proj also emits the output gate
            add_linear(hw, fwd, bwd, t, cfg.q_width // tp, cfg.d_model)
        attention_core(cfg, layout, hw, fwd, bwd, b, seq_len, kernel, document)
        if kernel != "flash":
            add_memory(hw, fwd, bwd, softmax_bytes(cfg, layout, b, seq_len, dropout), "softmax")
    if mixer in STATE_MIXERS:
        state_mixer_times(m.mixer, hw, fwd, bwd, b, seq_len, tp)
    a2a = None
    if ffn == "dense":
        mlp(cfg, hw, fwd, bwd, t, tp)
    elif ffn == "moe":
        a2a, shared = experts(cfg, layout, hw, fwd, bwd, t, capacity_factor)
    branches = sublayers(kind) / 2  # the norms, residual adds and TP reductions of a stack's 2 branches
    rotary = mixer in ATTENTION_MIXERS  # rotary on attention only
    add_memory(hw, fwd, bwd, branches * elementwise_bytes(cfg, layout, t, dropout, rotary))
    comm_f, comm_b = Times(), Times()
    tp_comm(cfg, layout, hw, comm_f, comm_b, t)
    _scaled(fwd, comm_f, branches)
    _scaled(bwd, comm_b, branches)
    if a2a is not None:
        ep_exposed(hw, fwd, bwd, a2a, shared)
    return fwd, bwd


def hybrid_block_params(cfg: ModelConfig, kind: tuple[str, str], tp: int, ep: int, etp: int) -> float:
    """Parameters of one hybrid layer on one rank: its tensors as tensor parallelism splits them,
    routed experts over ep x etp."""
    total = 0.0
    for tensor in block_tensors(cfg, kind):
        if tensor.expert:
            total += tensor.numel / (ep * etp)
            continue
        n = tensor.copies
        for size in tensor.tp_local_shape(tp):
            n *= size
        total += n
    return total
