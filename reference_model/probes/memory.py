"""Measure the bytes the reference model holds, on CPU, and compare them with sizing.memory.

* Activations: every tensor autograd saves for backward during one training forward
  (torch.autograd.graph.saved_tensors_hooks), each storage counted once at its full size,
  parameters and buffers left out. A storage is attributed to block i when block i saves it
  (or it is the input a checkpointed block i keeps), to "outside" when it is saved outside
  the blocks or by several blocks (the RoPE tables every layer multiplies by).
* KV cache: the K and V tensors of the cache generate() preallocates (model.last_kv_cache).
* Model states: parameters, .grad after one backward (a zero one for a module trained by its own
  loss, DSA's indexer: model.dsa.fill_own_loss_grads), and torch.optim state after one step.

Attention on CPU: torch's SDPA picks its CPU flash kernel (ScaledDotProductFlashAttentionForCpu)
for these shapes; it saves q, k, v, the output and the fp32 logsumexp and no T x T tensor
(test_cpu_sdpa_is_a_fused_kernel_that_saves_no_t_by_t_tensor), so the reference model's
`sdpa` path is checked against sizing's `flash` formula. What the reference model saves beyond
that, and where CPU kernels differ from CUDA, is named in memory_extras.py and added to the
formula (or shown as the remainder); in fp32 the formula then accounts for every byte.
With CUDA: `check_cuda_memory` compares memory_allocated growth over a bf16 forward, max over fwd+bwd."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch

from reference_model.model import build, fill_own_loss_grads
from reference_model.probes.memory_extras import (
    Remainder,
    cpu_remainders,
    reference_sdpa_extras,
    reference_selective_extras,
)
from sizing import RECOMPUTE_MODES, attention_impl, require_choice
from sizing import memory as M
from sizing.formulas import total_params
from sizing.inputs import ModelConfig

TOLERANCE = 0.02  # measured vs formula, relative; the formulas are term-by-term and land exact in fp32
_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def _one_thread(func):
    """Toy tensors run fastest on one intra-op thread (and do not fight other processes for
    cores); the caller's setting is restored afterwards."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return func(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)

    return wrapper


# ---------------------------------------------------------------- activations
@dataclass
class SavedStorage:
    nbytes: int
    shape: tuple
    dtype: str
    where: str  # "blocks.i" or "outside"


@dataclass
class ActivationMeasurement:
    per_layer: list[int]  # bytes attributed to each block
    outside: int
    items: list[SavedStorage] = field(repr=False)

    @property
    def total(self) -> int:
        return sum(self.per_layer) + self.outside


def _storage(t: torch.Tensor):
    if hasattr(t, "to_local"):  # a DTensor (tensor parallelism): the rank's local shard holds the bytes
        t = t.to_local()
    st = t.untyped_storage()
    return (t.device, st.data_ptr()), st.nbytes()


def measure_saved_activations(model, idx: torch.Tensor, targets: torch.Tensor) -> ActivationMeasurement:
    """Bytes saved for backward by one forward of `model(idx, targets)` (loss included)."""
    exclude = {_storage(t)[0] for t in list(model.parameters()) + list(model.buffers())}
    state = {"layer": None}
    block_inputs: dict = {}
    keep_alive = []  # hold block inputs so their addresses cannot be reused during the forward
    seen: dict = {}

    def pre_hook(i):
        def hook(_module, args):
            state["layer"] = i
            key, _ = _storage(args[0])
            block_inputs.setdefault(key, i)
            keep_alive.append(args[0])

        return hook

    def post_hook(_module, _args, _out):
        state["layer"] = None

    def pack(t):
        key, nbytes = _storage(t)
        if key not in exclude:
            entry = seen.setdefault(key, [nbytes, tuple(t.shape), str(t.dtype).replace("torch.", ""), set()])
            entry[3].add(state["layer"])
        return t

    handles = []
    for i, block in enumerate(model.blocks):
        handles.append(block.register_forward_pre_hook(pre_hook(i)))
        handles.append(block.register_forward_hook(post_hook))
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            _, loss = model(idx, targets)
    finally:
        for handle in handles:
            handle.remove()
    del loss
    per_layer = [0] * len(model.blocks)
    outside, items = 0, []
    for key, (nbytes, shape, dtype, layers) in seen.items():
        inside = [i for i in layers if i is not None]
        if len(layers) == 1 and inside:
            layer = inside[0]
        elif layers == {None} and key in block_inputs:  # kept by a checkpointed block
            layer = block_inputs[key]
        else:
            layer = None
        if layer is None:
            outside += nbytes
        else:
            per_layer[layer] += nbytes
        items.append(SavedStorage(nbytes, shape, dtype, "outside" if layer is None else f"blocks.{layer}"))
    return ActivationMeasurement(per_layer, outside, items)


@dataclass
class ActivationCheck:
    label: str  # e.g. "math", "sdpa", "sdpa + recompute full (bf16)"
    impl: str
    recompute: str
    dtype: str
    formula_per_layer: int  # sizing.memory.activation_terms for the path
    formula_outside: int
    extras: list[Remainder]  # the reference path's own saves, added to the formula before comparing
    cpu: list[Remainder]  # CPU-kernel dtype differences: the explained remainder
    measured: ActivationMeasurement

    @property
    def n_layers(self) -> int:
        return len(self.measured.per_layer)

    @property
    def formula_total(self) -> int:
        return self.n_layers * self.formula_per_layer + self.formula_outside

    @property
    def expected_per_layer(self) -> int:
        return self.formula_per_layer + sum(r.per_layer for r in self.extras)

    @property
    def expected_total(self) -> int:
        return self.formula_total + sum(self.n_layers * r.per_layer + r.outside for r in self.extras)

    @property
    def relative_error(self) -> float:
        return self.measured.total / self.expected_total - 1

    @property
    def worst_layer_error(self) -> float:
        return max(abs(m / self.expected_per_layer - 1) for m in self.measured.per_layer)

    @property
    def unexplained(self) -> int:
        """measured - expected - the CPU remainders: 0 when every byte is accounted for."""
        cpu = sum(self.n_layers * r.per_layer + r.outside for r in self.cpu)
        return self.measured.total - self.expected_total - cpu

    @property
    def ok(self) -> bool:
        return abs(self.relative_error) <= TOLERANCE and self.worst_layer_error <= TOLERANCE

    def notes(self) -> list[str]:
        out = [f"{self.label}: reference path adds {r.per_layer:,} bytes per layer: {r.what}" for r in self.extras]
        out += [
            f"{self.label}: remainder {r.per_layer:,} bytes per layer, {r.outside:,} outside: {r.what}"
            for r in self.cpu
        ]
        if self.unexplained:
            out.append(f"{self.label}: {self.unexplained:,} bytes not accounted for by any named term")
        return out


@_one_thread
def check_activations(
    cfg: ModelConfig,
    impl: str = "math",
    recompute: str = "none",
    seq_len: int = 32,
    batch: int = 2,
    dtype: str = "fp32",
    seed: int = 0,
) -> ActivationCheck:
    """Measured saved activations of the reference model vs sizing.memory.activation_terms.
    impl is the reference model's ("math" -> sizing's math, "sdpa" -> sizing's flash);
    recompute "none" | "selective" (the model checkpoints its attention core) | "full" (each block)."""
    require_choice("recompute", recompute, RECOMPUTE_MODES)
    a = torch.tensor([], dtype=_DTYPES[dtype]).element_size()
    torch.manual_seed(seed)
    model = build(cfg, "cpu", attn_impl=impl, dtype=_DTYPES[dtype], seed=seed, checkpoint=recompute)
    model.train()
    generator = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator)
    targets = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator)
    measured = measure_saved_activations(model, idx, targets)
    sizing_impl = attention_impl(impl)
    terms = M.activation_terms(cfg, seq_len, batch, sizing_impl, recompute, a)
    if recompute == "selective":  # the core (with its K/V repeat and masks) runs inside the checkpoint
        extras = reference_selective_extras(cfg, seq_len)
    else:
        fused = sizing_impl == "flash" and recompute == "none"
        extras = reference_sdpa_extras(cfg, seq_len, batch, a) if fused else []
    label = (
        impl + (f" + recompute {recompute}" if recompute != "none" else "") + (f" ({dtype})" if dtype != "fp32" else "")
    )
    return ActivationCheck(
        label,
        impl,
        recompute,
        dtype,
        sum(t.bytes for t in terms if t.per_layer),
        sum(t.bytes for t in terms if not t.per_layer),
        extras,
        cpu_remainders(cfg, seq_len, batch, a, recompute),
        measured,
    )


# ---------------------------------------------------------------- KV cache
@dataclass
class KVCheck:
    prompt: int
    new_tokens: int
    batch: int
    dtype: str
    formula: int
    measured: int

    @property
    def ok(self) -> bool:
        return self.formula == self.measured


@_one_thread
def check_kv_cache(
    cfg: ModelConfig, prompt: int = 8, new_tokens: int = 24, batch: int = 2, dtype: str = "fp32", seed: int = 0
) -> KVCheck:
    """Bytes of the K and V tensors generate() preallocates vs kv_cache_bytes(context = prompt +
    new tokens): exact. With a window shorter than that, the cache is a ring of W slots."""
    model = build(cfg, "cpu", dtype=_DTYPES[dtype], seed=seed).eval()
    idx = torch.randint(0, cfg.vocab_size, (batch, prompt), generator=torch.Generator().manual_seed(seed))
    model.generate(idx, new_tokens, temperature=0)
    cache = model.last_kv_cache
    storages = {}
    for t in cache.tensors():
        key, nbytes = _storage(t)
        storages[key] = nbytes
    return KVCheck(
        prompt,
        new_tokens,
        batch,
        dtype,
        M.kv_cache_bytes(cfg, prompt + new_tokens, batch, dtype),
        sum(storages.values()),
    )


# ---------------------------------------------------------------- weights, gradients, optimizer
@dataclass
class StatesCheck:
    precision: str  # sizing's policy the model's dtype matches: fp32 or bf16 (pure)
    optimizer: str
    rows: list[tuple[str, int, int]]  # (quantity, formula, measured)
    step_bytes: int  # torch's per-tensor `step` counters (4 bytes each), not in the formula
    param_tensors: int

    @property
    def ok(self) -> bool:
        return all(formula == measured for _, formula, measured in self.rows)


@_one_thread
def check_model_states(
    cfg: ModelConfig, dtype: str = "fp32", optimizer: str = "adamw", seq_len: int = 16, batch: int = 2, seed: int = 0
) -> StatesCheck:
    """Parameters, gradients after one backward and optimizer state after one step vs
    weights_bytes / gradients_bytes / optimizer_state_bytes for the pure policy of `dtype`."""
    precision = {"fp32": "fp32", "bf16": "bf16"}[dtype]
    torch.manual_seed(seed)
    model = build(cfg, "cpu", dtype=_DTYPES[dtype], seed=seed)
    model.train()
    generator = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator)
    targets = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator)
    params = list(model.parameters())
    if optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=1e-3, foreach=False)
    elif optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=False)
    else:
        raise ValueError(f"optimizer ({optimizer!r}) must be adamw or sgd for the probe")
    _, loss = model(idx, targets)
    loss.backward()
    fill_own_loss_grads(model)
    opt.step()

    def nbytes(tensors) -> int:
        storages = {}
        for t in tensors:
            key, n = _storage(t)
            storages[key] = n
        return sum(storages.values())

    missing = [n for n, p in model.named_parameters() if p.grad is None]
    if missing:
        raise RuntimeError(f"parameters without a gradient after backward (an expert no token reached?): {missing}")
    state_tensors, step_tensors = [], []
    for p in params:
        for key, value in opt.state[p].items():
            if torch.is_tensor(value):
                (step_tensors if key == "step" else state_tensors).append(value)
    n = total_params(cfg)
    rows = [
        ("weights", M.weights_bytes(n, precision), nbytes(params)),
        ("gradients", M.gradients_bytes(n, precision), nbytes(p.grad for p in params)),
        (f"{optimizer} state", M.optimizer_state_bytes(n, precision, optimizer), nbytes(state_tensors)),
    ]
    return StatesCheck(precision, optimizer, rows, nbytes(step_tensors), len(params))


# ---------------------------------------------------------------- GPU (only where CUDA is present)
@dataclass
class CudaCheck:
    formula_forward: int  # saved activations (formula + reference extras) + the returned bf16 logits
    measured_forward: int  # memory_allocated() growth over one training forward
    formula_peak: int  # weights are outside both; gradients + activations + transient
    measured_peak: int  # max_memory_allocated() growth over forward + backward

    @property
    def relative_error(self) -> float:
        return self.measured_forward / self.formula_forward - 1

    @property
    def ok(self) -> bool:
        return abs(self.relative_error) <= TOLERANCE


def check_cuda_memory(
    cfg: ModelConfig, seq_len: int = 256, batch: int = 4, impl: str = "sdpa", seed: int = 0
) -> CudaCheck:
    """bf16 training step on the GPU: the caching allocator's growth over the forward (saved
    tensors + logits) vs the formula, and the peak of forward + backward beside the formula's
    gradients + activations + transient. A warm-up step first, so that cuBLAS workspaces and
    kernels' one-off buffers are in the baseline. Needs CUDA."""
    device = torch.device("cuda")
    model = build(cfg, device, attn_impl=impl, dtype=torch.bfloat16, seed=seed)
    model.train()
    generator = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator).to(device)
    targets = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator).to(device)
    model(idx, targets)[1].backward()  # warm-up
    for p in model.parameters():
        p.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    logits, loss = model(idx, targets)
    torch.cuda.synchronize()
    forward = torch.cuda.memory_allocated() - base
    loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    a, sizing_impl = 2, attention_impl(impl)
    extras = reference_sdpa_extras(cfg, seq_len, batch, a) if sizing_impl == "flash" else []
    saved = M.activations_bytes(cfg, seq_len, batch, sizing_impl, "none", a) + cfg.n_layers * sum(
        r.per_layer for r in extras
    )
    logits_bytes = batch * seq_len * cfg.padded_vocab * a
    peak_formula = (
        M.gradients_bytes(total_params(cfg), "bf16")
        + saved
        + M.transient_bytes(cfg, seq_len, batch, sizing_impl, "none", a)
    )
    del logits, loss
    return CudaCheck(saved + logits_bytes, forward, peak_formula, peak)
