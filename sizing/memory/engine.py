"""The serving engine's own memory: how vLLM and SGLang split one GPU into weights, the
profiled activation peak, CUDA graphs, memory outside torch, and paged KV cache blocks, and
so the KV capacity and the maximum concurrency the engine reports at start-up.

vLLM (docs "Engine arguments" and "Conserving memory"; vllm/v1/worker/gpu_worker.py
determine_available_memory): the engine may use `gpu_memory_utilization` x the GPU's memory.
It loads the weights, runs one profiling forward of `max_num_batched_tokens` dummy tokens
(and the sampler over `max_num_seqs` rows), and measures the torch peak plus the memory
allocated outside torch (CUDA context, NCCL, cuBLAS workspaces). What is left becomes the KV
cache, in blocks of `block_size` tokens (16 by default) for every layer:

    KV bytes = utilization x GPU - weights - activation peak - non-torch memory
    blocks = floor(KV bytes / (block_size x KV bytes per token))

It logs "GPU KV cache size: blocks x block_size tokens" and "Maximum concurrency for
max_model_len tokens per request: tokens / max_model_len x". CUDA graphs are captured after the
KV cache is allocated, so they come out of the (1 - utilization) share (checked here).

SGLang (docs "Hyperparameter tuning", python/sglang/srt/model_executor/model_runner.py
profile_max_num_token): `mem_fraction_static` of the GPU holds the weights and the KV pool; the
rest (1 - fraction) is for activations and CUDA graphs. KV pool = fraction x GPU - weights -
non-torch memory, at one token per page.

Under tensor parallelism each GPU holds weights / tp and its share of the KV heads; an MLA
latent cache (one shared latent per token) and KV heads fewer than tp are replicated.
Not modelled: sliding-window layers' smaller allocation under vLLM's hybrid KV allocator (every
layer is counted at full context here, as vLLM does without it), speculative-decoding drafts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import GIB, ModelConfig, get_gpu
from sizing.memory.kv import dtype_bytes
from sizing.memory.prefill import prefill_activation_peak_bytes
from sizing.validate import SizingError, require_choice, require_fraction, require_int
from sizing.vocabulary import DTYPE_BITS, ceil_div

ENGINES = ("vllm", "sglang")
DEFAULT_BLOCK_SIZE = {"vllm": 16, "sglang": 1}  # vLLM --block-size default; SGLang pages one token
# vLLM's documented default; SGLang picks its default from the GPU's memory and the TP size
# (server_args.py), so 0.88 here is an assumption: pass the value the engine logs.
DEFAULT_UTILIZATION = {"vllm": 0.9, "sglang": 0.88}
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192  # vLLM V1 default for the OpenAI server (chunked prefill on)
DEFAULT_MAX_NUM_SEQS = 256  # vLLM --max-num-seqs default
# Assumed, not measured: both engines log the measured figures at start-up (vLLM "non-torch
# memory", "Graph capturing finished ... took X GiB"); pass those instead.
DEFAULT_NON_TORCH_BYTES = GIB // 2
DEFAULT_CUDA_GRAPH_BYTES = GIB // 2


def kv_bytes_per_token(cfg: ModelConfig, kv_dtype: str = "bf16", tp: int = 1) -> int:
    """One token's K and V over all layers on one of tp GPUs: 2·ceil(h_kv/tp)·d_h per layer
    (heads fewer than tp are replicated), or r_kv + d_r under MLA (the latent is replicated)."""
    require_int("tp", tp)
    mla = cfg.kv_lora_rank + cfg.qk_rope_head_dim + (cfg.index_head_dim if cfg.has_indexer else 0) if cfg.is_mla else 0
    per_layer = mla or 2 * ceil_div(cfg.kv_heads, tp) * cfg.d_head
    return dtype_bytes(per_layer * cfg.n_layers, kv_dtype)


@dataclass(frozen=True)
class EngineTerm:
    name: str
    bytes: int
    formula: str
    source: str


@dataclass(frozen=True)
class EngineMemory:
    engine: str
    gpu: str
    max_model_len: int
    tp: int
    terms: tuple[EngineTerm, ...]  # budget first, then what is taken from it
    kv_budget_bytes: int
    kv_bytes_per_token: int
    block_size: int
    num_blocks: int
    cuda_graph_bytes: int
    outside_budget_bytes: int  # the GPU share the engine leaves: CUDA graphs must fit here (vLLM)
    max_num_seqs: int

    @property
    def kv_tokens(self) -> int:
        return self.num_blocks * self.block_size

    @property
    def max_concurrency(self) -> float:
        """Requests of max_model_len tokens the cache holds at once (vLLM's start-up line)."""
        return self.kv_tokens / self.max_model_len

    @property
    def fits(self) -> bool:
        """The engine starts: one request of max_model_len fits, and the CUDA graphs fit outside."""
        return self.kv_tokens >= self.max_model_len and self.cuda_graph_bytes <= self.outside_budget_bytes

    def to_dict(self) -> dict:
        return {
            "engine": self.engine,
            "gpu": self.gpu,
            "tp": self.tp,
            "max_model_len": self.max_model_len,
            "terms": [{"name": t.name, "bytes": t.bytes, "formula": t.formula, "source": t.source} for t in self.terms],
            "kv_budget_bytes": self.kv_budget_bytes,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "block_size": self.block_size,
            "num_blocks": self.num_blocks,
            "kv_tokens": self.kv_tokens,
            "max_concurrency": self.max_concurrency,
            "max_running_requests": min(self.max_num_seqs, int(self.max_concurrency)),
            "cuda_graph_bytes": self.cuda_graph_bytes,
            "outside_budget_bytes": self.outside_budget_bytes,
            "fits": self.fits,
        }


def engine_memory(
    cfg: ModelConfig,
    weights_bytes: int,
    max_model_len: int,
    engine: str = "vllm",
    gpu: str = "h100",
    utilization: float | None = None,
    kv_dtype: str = "bf16",
    tp: int = 1,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
    block_size: int | None = None,
    non_torch_bytes: int = DEFAULT_NON_TORCH_BYTES,
    cuda_graph_bytes: int = DEFAULT_CUDA_GRAPH_BYTES,
    activation_dtype: str = "bf16",
    gpu_memory_bytes: int | None = None,
) -> EngineMemory:
    """The engine's split of one GPU (module docstring); `weights_bytes` is the whole model's
    (any format), divided over tp here. `gpu_memory_bytes`: the total the engine logs
    (torch.cuda.mem_get_info), for a GPU the table lacks or reports differently."""
    utilization, block_size = _checked_settings(
        engine, kv_dtype, utilization, block_size, max_model_len, max_num_batched_tokens, max_num_seqs
    )
    require_int("non_torch_bytes", non_torch_bytes, minimum=0)
    require_int("cuda_graph_bytes", cuda_graph_bytes, minimum=0)
    if cfg.n_heads % require_int("tp", tp):
        raise SizingError(f"tp ({tp}) must divide n_heads ({cfg.n_heads}): each rank holds whole heads")
    entry = get_gpu(gpu)
    total = entry.memory_bytes if gpu_memory_bytes is None else require_int("gpu_memory_bytes", gpu_memory_bytes)
    budget = int(total * utilization)
    weights = ceil_div(weights_bytes, require_int("tp", tp))
    terms = [
        EngineTerm("engine budget", budget, f"{utilization:g} x {total / GIB:.2f} GiB ({entry.key})", _BUDGET[engine]),
        EngineTerm("weights", weights, f"weights / tp {tp}", "the model's weight bytes in its format"),
        EngineTerm("non-torch memory", non_torch_bytes, "CUDA context, NCCL, cuBLAS workspaces", _ASSUMED),
    ]
    if engine == "vllm":  # SGLang keeps activations outside its static fraction: nothing profiled
        terms.append(_profiled_peak_term(cfg, activation_dtype, max_num_batched_tokens, max_num_seqs))
    kv_budget = budget - sum(t.bytes for t in terms[1:])
    per_token = kv_bytes_per_token(cfg, kv_dtype, tp)
    num_blocks = max(0, kv_budget) // (block_size * per_token)
    return EngineMemory(
        engine,
        entry.key,
        max_model_len,
        tp,
        tuple(terms),
        kv_budget,
        per_token,
        block_size,
        num_blocks,
        cuda_graph_bytes,
        total - budget,
        max_num_seqs,
    )


def _checked_settings(
    engine: str,
    kv_dtype: str,
    utilization: float | None,
    block_size: int | None,
    max_model_len: int,
    max_num_batched_tokens: int,
    max_num_seqs: int,
) -> tuple[float, int]:
    """The engine's settings checked, with its own defaults filled in: (utilization, block_size)."""
    require_choice("engine", engine, ENGINES)
    require_choice("kv_dtype", kv_dtype, DTYPE_BITS)
    utilization = DEFAULT_UTILIZATION[engine] if utilization is None else utilization
    require_fraction("gpu_memory_utilization", utilization)
    for name, value in (("max_model_len", max_model_len), ("max_num_batched_tokens", max_num_batched_tokens)):
        require_int(name, value)
    require_int("max_num_seqs", max_num_seqs)
    block_size = DEFAULT_BLOCK_SIZE[engine] if block_size is None else require_int("block_size", block_size)
    return utilization, block_size


def _profiled_peak_term(
    cfg: ModelConfig, activation_dtype: str, max_num_batched_tokens: int, max_num_seqs: int
) -> EngineTerm:
    """vLLM's profiling forward: max_num_batched_tokens dummy tokens, the sampler over
    min(max_num_seqs, tokens) rows; its torch peak is taken from the budget."""
    a = dtype_bytes(1, activation_dtype)
    tokens = max_num_batched_tokens
    peak = prefill_activation_peak_bytes(cfg, tokens, min(max_num_seqs, tokens), a)
    return EngineTerm(
        "profiled activation peak",
        peak,
        f"one forward of max_num_batched_tokens {tokens} (and the sampler's {min(max_num_seqs, tokens)} rows)",
        "vLLM profile_run; peak = max(attention, MLP, logits) (sizing/memory/prefill.py)",
    )


_BUDGET = {
    "vllm": "vLLM --gpu-memory-utilization (default 0.9): requested = utilization x total GPU memory",
    "sglang": "SGLang --mem-fraction-static: weights + KV pool; the rest holds activations and CUDA graphs",
}
_ASSUMED = "assumed 0.5 GiB; the engine logs the measured figure at start-up"
