"""The serving engine's own memory: how vLLM and SGLang split one GPU into weights, the
profiled activation peak, memory outside torch and paged KV cache blocks, and so the KV capacity
and the maximum concurrency the engine reports at start-up.

vLLM (vllm/v1/worker/gpu_worker.py determine_available_memory, vllm/utils/mem_utils.py
memory_profiling; docs "Engine arguments"): the engine may use `gpu_memory_utilization` x the
total memory the device reports (torch.cuda.mem_get_info: 79.22 GiB on an H100 80GB, not the
81,559 MiB nvidia-smi shows; sizing/memory/engine_data.py). It loads the weights (one rank's:
engine_weights.py), runs one profiling forward of `max_num_batched_tokens` dummy tokens and its
sampler (engine_profile.py), and measures the torch peak and the memory allocated outside torch
since start-up. What is left becomes the KV cache, in blocks of `block_size` tokens for every
layer:

    KV bytes = utilization x reported memory - weights - activation peak - non-torch memory
    blocks   = floor(KV bytes / (block_size x KV bytes per token))        (vLLM block_size 16)

It logs "GPU KV cache size: blocks x block_size tokens" and "Maximum concurrency for
max_model_len tokens per request: blocks / blocks per request". With sliding-window or chunked
layers the hybrid allocator (vllm/v1/core/kv_cache_utils.py) still prints the tokens as if every
layer held them, but a request needs only window + max_num_batched_tokens positions of a local
layer, so the concurrency is higher. CUDA graphs are captured after the KV cache is allocated:
they come out of the (1 - utilization) share (checked here).

SGLang (python/sglang/srt/model_executor/model_runner.py profile_max_num_token):
`mem_fraction_static` x the GPU's memory holds the weights and the token pool; the rest is for
activations and CUDA graphs: pool = fraction x memory - weights - the memory outside torch taken
before the pool, at one token per page.

Under tensor parallelism each rank holds its weights (with the replicated parts) and its share of
the KV heads; an MLA latent cache (one shared latent per token) and KV heads fewer than tp are
replicated. Checked against engine start-up logs row by row (sizing/data/engine_logs.json,
reports/serving.md). Not modelled: a VLM's encoder profiling run, speculative-decoding drafts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import GIB, ModelConfig, get_gpu
from sizing.memory.engine_data import (
    VLLM_PROFILES,
    default_non_torch_bytes,
    reported_memory_bytes,
    vllm_default_batch,
)
from sizing.memory.engine_profile import profile_peak
from sizing.memory.kv import dtype_bytes
from sizing.validate import SizingError, require_choice, require_fraction, require_int
from sizing.vocabulary import DTYPE_BITS, ceil_div

ENGINES = ("vllm", "sglang")
DEFAULT_BLOCK_SIZE = {"vllm": 16, "sglang": 1}  # vLLM --block-size default; SGLang pages one token
# vLLM's long-standing default (0.92 in its 2026 releases); SGLang picks its default from the GPU's
# memory and the TP size (server_args.py), so 0.88 here is an assumption: pass the value it logs.
DEFAULT_UTILIZATION = {"vllm": 0.9, "sglang": 0.88}
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192  # vLLM V1's server default on an H100-class GPU (engine_data.py)
DEFAULT_MAX_NUM_SEQS = 256  # vLLM's --max-num-seqs default below the H100 class
# Assumed, not measured: SGLang's memory outside torch before the pool (CUDA context, NCCL), and
# the CUDA graphs both engines capture; both engines log the measured figures at start-up.
SGLANG_OUTSIDE_TORCH_BYTES = GIB // 2
DEFAULT_CUDA_GRAPH_BYTES = GIB // 2


def kv_bytes_per_token(cfg: ModelConfig, kv_dtype: str = "bf16", tp: int = 1) -> int:
    """One token's K and V over all layers on one of tp GPUs: 2·ceil(h_kv/tp)·d_h per layer
    (heads fewer than tp are replicated), or r_kv + d_r under MLA (the latent is replicated)."""
    require_int("tp", tp)
    mla = cfg.kv_lora_rank + cfg.qk_rope_head_dim + (cfg.index_head_dim if cfg.has_indexer else 0) if cfg.is_mla else 0
    per_layer = mla or 2 * ceil_div(cfg.kv_heads, tp) * cfg.d_head
    return dtype_bytes(per_layer * cfg.n_layers, kv_dtype)


def request_kv_bytes(cfg: ModelConfig, max_model_len: int, block: int, per_token: int, batched: int) -> int:
    """One request's KV at max_model_len on one rank, as vLLM's allocator holds it: whole blocks,
    a local layer only its window (or chunk) + max_num_batched_tokens positions."""
    per_layer = per_token // cfg.n_layers
    full = ceil_div(max_model_len, block) * block * per_layer * cfg.n_global_layers
    if not cfg.n_local_layers:
        return full
    span = min(max_model_len, cfg.local_window + batched)
    return full + ceil_div(span, block) * block * per_layer * cfg.n_local_layers


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
    request_bytes: int = 0  # one request of max_model_len, as the allocator holds it (0: tokens x per token)

    @property
    def kv_tokens(self) -> int:
        return self.num_blocks * self.block_size

    @property
    def max_concurrency(self) -> float:
        """Requests of max_model_len the cache holds at once (vLLM's start-up line)."""
        one = self.request_bytes or self.max_model_len * self.kv_bytes_per_token
        return self.num_blocks * self.block_size * self.kv_bytes_per_token / one

    @property
    def fits(self) -> bool:
        """The engine starts: one request of max_model_len fits, and the CUDA graphs fit outside."""
        return self.max_concurrency >= 1 and self.cuda_graph_bytes <= self.outside_budget_bytes

    def term(self, name: str) -> int:
        return next(t.bytes for t in self.terms if t.name == name)

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


@dataclass(frozen=True)
class EngineRun:
    """How the engine is started: its settings, each None for the engine's own default."""

    engine: str = "vllm"
    utilization: float | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    block_size: int | None = None
    non_torch_bytes: int | None = None
    cuda_graph_bytes: int = DEFAULT_CUDA_GRAPH_BYTES
    gpu_memory_bytes: int | None = None  # the total the engine logs; None: the GPU's reported memory
    profile: str = "v1"  # vLLM generation: "v1" (2025-) or "v0"

    def checked(self, gpu) -> EngineRun:
        """Every field valid, the engine's defaults (by GPU for vLLM's batch) filled in."""
        require_choice("engine", self.engine, ENGINES)
        require_choice("vllm profile", self.profile, VLLM_PROFILES)
        utilization = DEFAULT_UTILIZATION[self.engine] if self.utilization is None else self.utilization
        require_fraction("gpu_memory_utilization", utilization)
        tokens, seqs = vllm_default_batch(gpu)
        tokens = tokens if self.max_num_batched_tokens is None else self.max_num_batched_tokens
        seqs = seqs if self.max_num_seqs is None else self.max_num_seqs
        block = DEFAULT_BLOCK_SIZE[self.engine] if self.block_size is None else self.block_size
        non_torch = self.non_torch_bytes
        if non_torch is None:
            non_torch = default_non_torch_bytes() if self.engine == "vllm" else SGLANG_OUTSIDE_TORCH_BYTES
        total = reported_memory_bytes(gpu)[0] if self.gpu_memory_bytes is None else self.gpu_memory_bytes
        for name, value in (("max_num_batched_tokens", tokens), ("max_num_seqs", seqs), ("block_size", block)):
            require_int(name, value)
        require_int("non_torch_bytes", non_torch, minimum=0)
        require_int("cuda_graph_bytes", self.cuda_graph_bytes, minimum=0)
        require_int("gpu_memory_bytes", total)
        return EngineRun(
            self.engine, utilization, tokens, seqs, block, non_torch, self.cuda_graph_bytes, total, self.profile
        )


def engine_memory(
    cfg: ModelConfig,
    weights_per_rank: int,
    max_model_len: int,
    gpu: str = "h100",
    run: EngineRun | None = None,
    kv_dtype: str = "bf16",
    tp: int = 1,
    activation_dtype: str = "bf16",
) -> EngineMemory:
    """The engine's split of one GPU (module docstring) for a model whose rank holds
    `weights_per_rank` bytes (engine_weights.engine_weights_bytes_per_rank for a format)."""
    entry = get_gpu(gpu)
    run = (run or EngineRun()).checked(entry)
    require_int("max_model_len", max_model_len)
    require_choice("kv_dtype", kv_dtype, DTYPE_BITS)
    if cfg.n_heads % require_int("tp", tp):
        raise SizingError(f"tp ({tp}) must divide n_heads ({cfg.n_heads}): each rank holds whole heads")
    budget = int(run.gpu_memory_bytes * run.utilization)
    terms = [
        EngineTerm("engine budget", budget, _budget_formula(run), _BUDGET[run.engine]),
        EngineTerm("weights", require_int("weights_per_rank", weights_per_rank), f"one rank's of tp {tp}", _WEIGHTS),
        _non_torch_term(run),
    ]
    if run.engine == "vllm":  # SGLang keeps activations outside its static fraction: nothing profiled
        terms.append(_profiled_peak_term(cfg, run, tp, dtype_bytes(1, activation_dtype)))
    kv_budget = budget - sum(t.bytes for t in terms[1:])
    per_token = kv_bytes_per_token(cfg, kv_dtype, tp)
    num_blocks = max(0, kv_budget) // (run.block_size * per_token)
    request = request_kv_bytes(cfg, max_model_len, run.block_size, per_token, run.max_num_batched_tokens)
    return EngineMemory(
        run.engine,
        entry.key,
        max_model_len,
        tp,
        tuple(terms),
        kv_budget,
        per_token,
        run.block_size,
        num_blocks,
        run.cuda_graph_bytes,
        run.gpu_memory_bytes - budget,
        run.max_num_seqs,
        request if run.engine == "vllm" else 0,
    )


def _budget_formula(run: EngineRun) -> str:
    return f"{run.utilization:g} x {run.gpu_memory_bytes / GIB:.2f} GiB"


def _non_torch_term(run: EngineRun) -> EngineTerm:
    if run.engine == "sglang":
        return EngineTerm("non-torch memory", run.non_torch_bytes, "CUDA context, NCCL, before the pool", _SGLANG_NT)
    return EngineTerm("non-torch memory", run.non_torch_bytes, "cuBLAS workspaces, NCCL, custom all-reduce", _VLLM_NT)


def _profiled_peak_term(cfg: ModelConfig, run: EngineRun, tp: int, activation_bytes: int) -> EngineTerm:
    """vLLM's profiling run on one rank (engine_profile.py); its torch peak is taken from the budget."""
    peak = profile_peak(cfg, run.max_num_batched_tokens, run.max_num_seqs, tp, run.profile, activation_bytes)
    rows = min(run.max_num_seqs, run.max_num_batched_tokens)
    return EngineTerm(
        "profiled activation peak",
        peak.peak,
        f"max of a {run.max_num_batched_tokens}-token forward and the sampler over {rows} rows ({peak.phase})",
        f"vLLM {run.profile} profile_run (sizing/memory/engine_profile.py)",
    )


_BUDGET = {
    "vllm": "--gpu-memory-utilization x the memory torch.cuda.mem_get_info reports",
    "sglang": "--mem-fraction-static: weights + KV pool; the rest holds activations and CUDA graphs",
}
_WEIGHTS = "the model in its format split over tp, replicated parts whole (sizing/memory/engine_weights.py)"
_VLLM_NT = "median of the logged figures (sizing/data/engine_logs.json); the engine logs the measured one"
_SGLANG_NT = "assumed 0.5 GiB; the engine logs the memory it has left after loading"


def engine_memory_for(
    cfg: ModelConfig,
    weights: str,
    max_model_len: int,
    gpu: str = "h100",
    run: EngineRun | None = None,
    kv_dtype: str = "bf16",
    tp: int = 1,
    max_positions: int | None = None,
) -> EngineMemory:
    """engine_memory with one rank's weights in `weights` (a dtype or a deployed format) as the
    engine allocates them (engine_weights.py); `max_positions`: the rotary cache's rows, the
    model's max_position_embeddings (max_model_len when not given)."""
    from sizing.memory.engine_weights import engine_weights_bytes_per_rank

    positions = max_model_len if max_positions is None else max_positions
    rank = engine_weights_bytes_per_rank(cfg, weights, tp, get_gpu(gpu), positions)
    return engine_memory(cfg, rank, max_model_len, gpu, run, kv_dtype, tp)
