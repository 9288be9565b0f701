"""sizing.parallel against PyTorch's own distributed engine, on CPU, in one process.

torch's fake process group (`torch.testing._internal.distributed.fake_pg.FakeStore` with
`init_process_group("fake", rank=0, world_size=N)`) lets one process play rank 0 of N: every
collective returns at once without moving data, but the real FSDP2 (`fully_shard`) and DTensor
tensor parallelism (`parallelize_module` with ColwiseParallel / RowwiseParallel) run, shard
and issue their collectives as on N GPUs. For each layout the probe builds the reference model
(toy size, on the meta device), applies tensor parallelism to every block's projections and
FSDP2 to every block and to the root, materialises rank 0's shards, runs one training step
(forward, backward, AdamW) and compares with the formulas:

* model states: the bytes of rank 0's local shards of the parameters, of their gradients and
  of AdamW's exp_avg / exp_avg_sq, against sizing.parallel.memory (uneven shards included:
  rank 0 holds ceil(n / ranks) rows, as torch.chunk gives it);
* collectives: every c10d / functional collective the step dispatches (recorded by a
  TorchDispatchMode: an all-gather's output, a reduce-scatter's input, an all-reduce's
  tensor), grouped by kind, against sizing.parallel.traffic (count and bytes).

The reference model keeps q, k, v, up and gate as separate linears, so tensor parallelism's
backward all-reduces one input gradient per column-parallel linear (5 per SwiGLU layer);
Megatron fuses them into 2. The formula is called with fused=False here and says so. AdamW's
`step` counters (a 4-byte tensor per parameter) are bookkeeping, listed apart as before.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import torch

from reference_model.model import small_config
from sizing.inputs import ModelConfig, get_gpu, get_preset
from sizing.parallel import ParallelLayout, Workload, activation_parts, stage_memory, step_collectives

SEQ_LEN, BATCH = 16, 2
WORK = Workload(SEQ_LEN, "fp32", "adamw", "none", "flash")  # the reference model's sdpa path is `flash`
_KINDS = {
    "_allgather_base_": "all_gather",
    "all_gather_into_tensor": "all_gather",
    "_reduce_scatter_base_": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter",
    "allreduce_": "all_reduce",
    "all_reduce": "all_reduce",
    "all_to_all_single": "all_to_all",
}


@dataclass(frozen=True)
class ProbeLayout:
    name: str
    preset: str
    layout: ParallelLayout
    layers: int = 2  # the toy's n_layers (small_config's 2; more to split over pipeline stages)


# At least six layouts over three families (GQA SwiGLU RMSNorm, GPT-2 with tied embedding and
# LayerNorm biases, MoE), with uneven shards (3, 5 and 6 ranks over widths of 64, 96, 224).
PROBE_LAYOUTS: tuple[ProbeLayout, ...] = (
    ProbeLayout("FSDP 3 (uneven)", "llama2-70b", ParallelLayout(dp=3, fsdp="full", vocab_parallel=False)),
    ProbeLayout("TP 2", "llama2-70b", ParallelLayout(tp=2, vocab_parallel=False)),
    ProbeLayout("TP 4", "gpt2", ParallelLayout(tp=4, vocab_parallel=False)),
    ProbeLayout("TP 2 + SP", "llama2-70b", ParallelLayout(tp=2, sequence_parallel=True, vocab_parallel=False)),
    ProbeLayout("FSDP 3 x TP 2", "llama2-70b", ParallelLayout(dp=3, tp=2, fsdp="full", vocab_parallel=False)),
    ProbeLayout("HSDP 2 x 2", "llama2-70b", ParallelLayout(dp=4, fsdp="hybrid", shard_group=2, vocab_parallel=False)),
    ProbeLayout("FSDP 5 (uneven)", "gpt2", ParallelLayout(dp=5, fsdp="full", vocab_parallel=False)),
    ProbeLayout("FSDP 2 x TP 4", "gpt2", ParallelLayout(dp=2, tp=4, fsdp="full", vocab_parallel=False)),
    ProbeLayout(
        "FSDP 2 x TP 2 + SP",
        "gpt2",
        ParallelLayout(dp=2, tp=2, fsdp="full", sequence_parallel=True, vocab_parallel=False),
    ),
    ProbeLayout("FSDP 4, MoE", "mixtral-8x7b", ParallelLayout(dp=4, fsdp="full", vocab_parallel=False)),
    # latent attention, 2 shared experts and a first dense layer: units of two kinds of block
    ProbeLayout("FSDP 3, MLA + dense/MoE", "deepseek-v2-lite", ParallelLayout(dp=3, fsdp="full", vocab_parallel=False)),
)


class CollectiveRecorder(torch.utils._python_dispatch.TorchDispatchMode):
    """Every collective dispatched inside the mode: (kind, bytes of its full buffer)."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace in ("c10d", "_c10d_functional", "c10d_functional"):
            kind = _KINDS.get(func.__name__.split(".")[0])
            if kind is not None:
                tensors = [a for a in args if isinstance(a, torch.Tensor)]
                if kind == "all_reduce" and not tensors:  # c10d.allreduce_ takes a list
                    tensors = [
                        t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, torch.Tensor)
                    ]
                # all-gather: (output, input) in c10d, (input) functional -> the gathered size
                ranks = 1
                if kind == "all_gather" and func.namespace == "c10d":
                    buffer = tensors[0]  # _allgather_base_(output, input)
                elif kind == "reduce_scatter" and func.namespace == "c10d":
                    buffer = tensors[1]  # _reduce_scatter_base_(output, input)
                else:  # functional: all_gather_into_tensor(shard, group_size, group) returns the gathered
                    buffer = tensors[0]
                    ranks = args[1] if kind == "all_gather" else 1
                self.calls.append((kind, ranks * buffer.numel() * buffer.element_size()))
        return func(*args, **kwargs)


def _round_robin(moe):
    """Deal the N k (token, slot) pairs over the experts in turn (the reference model's meta-device
    routing): the fake group's all-gathers leave the other ranks' router rows without values,
    so routing by value would send every token to whichever experts those bytes favour."""

    def routed(top_idx: torch.Tensor, j: int):
        n_experts, pairs = len(moe.experts), top_idx.numel()
        count = pairs // n_experts + (1 if j < pairs % n_experts else 0)
        pair = torch.arange(count) * n_experts + j
        return pair // moe.top_k, pair % moe.top_k

    return routed


def _tp_plan(cfg: ModelConfig, sequence_parallel: bool) -> dict:
    """Megatron's split as torch writes it (torchtitan's plan). With sequence parallelism the
    block runs on sequence shards: the attention and the MLP gather their input once
    (PrepareModuleInput Shard(1) -> Replicate) and the row-parallel outputs reduce-scatter back."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, RowwiseParallel

    row = (lambda: RowwiseParallel(output_layouts=Shard(1))) if sequence_parallel else RowwiseParallel
    plan = {"attn.q": ColwiseParallel(), "attn.k": ColwiseParallel(), "attn.v": ColwiseParallel(), "attn.o": row()}
    plan.update({"mlp.up": ColwiseParallel(), "mlp.down": row()})
    if cfg.gated_mlp:
        plan["mlp.gate"] = ColwiseParallel()
    if sequence_parallel:
        plan["attn"] = PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None))
        plan["mlp"] = PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),))
    return plan


def _sequence_parallel_ends(model, mesh) -> None:
    """The first block takes its sequence shard of the embedding; the lm_head gathers the sequence."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import PrepareModuleInput, parallelize_module

    shard = PrepareModuleInput(
        input_layouts=(Replicate(), None), desired_input_layouts=(Shard(1), None), use_local_output=True
    )
    parallelize_module(model.blocks[0], mesh, shard)
    gather = PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),), use_local_output=True)
    parallelize_module(model.lm_head, mesh, gather)


def _mesh(layout: ParallelLayout):
    from torch.distributed.device_mesh import init_device_mesh

    if layout.fsdp == "hybrid":
        replicas = layout.dp // layout.shard_degree
        mesh = init_device_mesh("cpu", (replicas, layout.shard_degree, layout.tp), mesh_dim_names=("rep", "dp", "tp"))
        return mesh, mesh["rep", "dp"]
    mesh = init_device_mesh("cpu", (layout.dp, layout.tp), mesh_dim_names=("dp", "tp"))
    return mesh, mesh["dp"]


def shard_model(cfg: ModelConfig, layout: ParallelLayout):
    """The reference model with tp on every block's projections and FSDP2 on blocks and root."""
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import parallelize_module

    from reference_model.model import build

    mesh, dp_mesh = _mesh(layout)
    model = build(cfg, device="meta", attn_impl="sdpa")
    for block in model.blocks:
        if layout.tp > 1:
            parallelize_module(block, mesh["tp"], _tp_plan(cfg, layout.sequence_parallel))
            block.attn.n_heads //= layout.tp  # the local heads of this tp rank
            block.attn.kv_heads //= layout.tp
        if block.is_moe:  # a dense layer of an MoE model (first_dense_layers) has no router
            block.moe._routed = _round_robin(block.moe)
        if layout.fsdp is not None:
            fully_shard(block, mesh=dp_mesh)
    if layout.sequence_parallel:
        _sequence_parallel_ends(model, mesh["tp"])
    if layout.fsdp is not None:
        fully_shard(model, mesh=dp_mesh)
    model.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            local = p.to_local() if hasattr(p, "to_local") else p
            local.copy_(torch.randn(local.shape, generator=generator) * 0.02)
    return model


def _local_bytes(tensors) -> int:
    total = 0
    for t in tensors:
        local = t.to_local() if hasattr(t, "to_local") else t
        total += local.numel() * local.element_size()
    return total


@dataclass
class ProbeResult:
    name: str
    rows: list[list]  # quantity, formula, torch, difference

    @property
    def ok(self) -> bool:
        return all(r[1] == r[2] for r in self.rows)


def sequence_parallel_gathered_inputs(cfg: ModelConfig, layout: ParallelLayout) -> int:
    """The named remainder of sequence parallelism: torch's DTensor saves the all-gathered inputs
    of the attention and the MLP (b.T.d.a each, for the column-parallel linears' weight
    gradients) where Megatron-LM, and the formula, save the sequence shard b.T.d.a / tp and
    gather it again in backward (traffic.tp_collectives counts those re-gathers when fused)."""
    if not layout.sequence_parallel:
        return 0
    full = BATCH * SEQ_LEN * cfg.d_model * 4
    return cfg.norms_per_block * (full - -(-full // layout.tp))


def activation_rows(cfg: ModelConfig, layout: ParallelLayout, work: Workload, model, idx, targets) -> list[list]:
    """Saved activations of one forward on this tp rank (memory_probe's saved-tensor hooks, on
    the DTensor model) against sizing.parallel.memory.activation_parts, plus what the
    reference sdpa path saves beyond a fused kernel (memory_extras, at the rank's heads)."""
    from dataclasses import replace

    from reference_model.probes.memory import measure_saved_activations
    from reference_model.probes.memory_extras import reference_sdpa_extras

    measured = measure_saved_activations(model, idx, targets)
    parts = activation_parts(cfg, layout, work)
    local = replace(
        cfg,
        n_heads=cfg.n_heads // layout.tp,
        head_dim=cfg.d_head,
        n_kv_heads=None if cfg.n_kv_heads is None else cfg.kv_heads // layout.tp,
    )
    extra = sum(r.per_layer for r in reference_sdpa_extras(local, SEQ_LEN, BATCH, 4))
    extra += sequence_parallel_gathered_inputs(cfg, layout)
    return [
        ["activation bytes per layer (largest block)", parts["per_layer"] + extra, max(measured.per_layer)],
        ["activation bytes outside the blocks", parts["first"] + parts["last"] + parts["shared"], measured.outside],
    ]


def probe_layout(probe: ProbeLayout) -> ProbeResult:
    """One layout: build, shard, one training step on the fake group; formula vs torch."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    cfg = small_config(get_preset(probe.preset).config, SEQ_LEN)
    lay = probe.layout
    dist.init_process_group("fake", rank=0, world_size=lay.world, store=FakeStore())
    try:
        model = shard_model(cfg, lay)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
        generator = torch.Generator().manual_seed(1)
        idx = torch.randint(0, cfg.vocab_size, (BATCH, SEQ_LEN), generator=generator)
        targets = torch.randint(0, cfg.vocab_size, (BATCH, SEQ_LEN), generator=generator)
        act_rows = []
        if lay.fsdp is None:  # FSDP's gathered weights are not parameters: the hooks would count them
            act_rows = activation_rows(cfg, _with_batch(lay), WORK, model, idx, targets)
        with CollectiveRecorder() as recorder:
            _, loss = model(idx, targets)
            loss.backward()
        params = list(model.parameters())
        grads = [p.grad for p in params if p.grad is not None]
        opt.step()
        states = [v for p in params for k, v in opt.state[p].items() if k != "step" and torch.is_tensor(v)]
        measured_states = (_local_bytes(params), _local_bytes(grads), _local_bytes(states))
    finally:
        dist.destroy_process_group()
    layout = _with_batch(lay)
    work = WORK
    terms = stage_memory(cfg, layout, work, 0)
    rows = [
        ["weights bytes (rank 0 shards)", terms["weights_bytes"], measured_states[0]],
        ["gradient bytes", terms["gradients_bytes"], measured_states[1]],
        ["AdamW exp_avg + exp_avg_sq bytes", terms["optimizer_bytes"], measured_states[2]],
    ]
    rows += act_rows
    formula = Counter()
    for c in step_collectives(cfg, layout, work, get_gpu("h100"), fused=False):
        formula[(c.kind, "calls")] += c.count
        formula[(c.kind, "bytes")] += c.bytes_per_step
    measured = Counter()
    for kind, n_bytes in recorder.calls:
        measured[(kind, "calls")] += 1
        measured[(kind, "bytes")] += n_bytes
    for key in sorted(set(formula) | set(measured)):
        rows.append([f"{key[0]} {key[1]}", formula[key], measured[key]])
    for row in rows:
        row.append(row[2] - row[1])
    return ProbeResult(probe.name, rows)


def _with_batch(layout: ParallelLayout) -> ParallelLayout:
    from dataclasses import replace

    return replace(layout, micro_batch=BATCH, micro_batches=1)
