"""What is run, as one frozen, validated object: the workload, beside the architecture
(ModelConfig) and the layout (sizing.parallel.ParallelLayout). Every training question takes it
(sizing.estimate, sizing.parallel.predict_run / parallel_plan / search_layout / min_gpus_that_fit /
would_fit); a command builds it once from its options (sizing/cli/parallel.py `_workload`), and a
reader of a trainer's file would return one.

    >>> from sizing.inputs import Workload
    >>> w = Workload(seq_len=4096, global_batch=1024, tokens=2 * 10**12, gpus=64, recompute="selective")
    >>> w.tokens_per_step
    4194304

A field left None is the question's to choose, and the answer states what it chose: no
global_batch is 4M tokens in sequences of seq_len (sizing.parallel.batches) in a layout search; no gpus is the
fewest that fit (a search) or the layout's world; recompute=None lets a search try none,
selective and full; no tokens is no run total; no dtype is the precision's matmul dtype.

To add a field: a line below with its default and meaning (None where the question chooses) and
its check in `__post_init__` (to_dict carries every field); then the option that sets it
(sizing/cli/spec_table.py) and the commands that pass it on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from sizing.validate import MAX_COUNT, MAX_SEQ_LEN, MAX_TOKENS, SizingError, require_choice, require_int
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    COMPUTE_DTYPES,
    DEFAULT_ATTENTION,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    EXTRA_PIPELINE_SCHEDULES,
    FINETUNE_MODES,
    FP8_RECIPE_NAMES,
    GRAD_REDUCE_DTYPES,
    LOSS_KERNELS,
    OPTIMIZER_ALIASES,
    OPTIMIZER_NAMES,
    PRECISION_ALIASES,
    PRECISION_POLICIES,
    RECOMPUTE_MODES,
    RECOMPUTE_MODULES,
    SELECTIVE_POLICIES,
)


@dataclass(frozen=True)
class Workload:
    """What is run; a field left None is the question's to choose (module docstring)."""

    seq_len: int  # tokens per sequence
    precision: str = DEFAULT_PRECISION  # training precision policy (sizing.memory.states.PRECISIONS)
    optimizer: str = DEFAULT_OPTIMIZER
    recompute: str | None = DEFAULT_RECOMPUTE  # None: a layout search chooses
    attention_impl: str = DEFAULT_ATTENTION_IMPL  # math or flash (what the kernel materialises)
    attention: str = DEFAULT_ATTENTION  # FLOP-counting convention of the model FLOPs: full or causal
    global_batch: int | None = None  # sequences per optimizer step
    tokens: int | None = None  # training tokens of the whole run
    gpus: int | None = None  # GPUs in all
    dtype: str | None = None  # the dtype whose dense peak MFU is measured against
    finetune: str = "full"  # full, lora or qlora
    # How the training software stores the run (sizing.parallel.memory_stack): `stack` picks a
    # stack's memory conventions (saved activations of its kernels, gradient buffer, fp8 copies);
    # None is the reference model's accounting, which the torch probes check. fp8_recipe
    # (sizing.memory.fp8), fp8_params (primary fp8 weights) and grad_reduce apply under a stack;
    # None takes the stack's.
    stack: str | None = None
    fp8_recipe: str = "tensorwise"  # tensorwise (delayed / current), blockwise or mxfp8
    fp8_params: bool | None = None
    grad_reduce: str | None = None  # fp32 or bf16 gradient buffer and reduction
    # The cross-entropy kernel (eager: fp32 log-softmax; fused: Megatron's in-place one; chunked:
    # Liger's fused linear cross-entropy, no whole logits) and what selective recompute drops
    # (attention: the attention core, Megatron; op: op-level, torchtitan); None takes the stack's.
    loss: str | None = None
    selective: str | None = None
    # Megatron-Core's selective recompute modules (vocabulary.RECOMPUTE_MODULES), under recompute
    # "selective" on a fused-kernel stack; None: the stack's selective kind.
    recompute_modules: tuple[str, ...] | None = None
    # A pipeline schedule beyond the layout's (zero-bubble, dualpipe: DualPipe's rank holds two
    # stages, sizing.parallel.dualpipe); None: the layout's own.
    schedule: str | None = None

    def __post_init__(self) -> None:
        require_int("seq_len", self.seq_len, 1, MAX_SEQ_LEN)
        self._canonical("precision", PRECISION_POLICIES, PRECISION_ALIASES)
        self._canonical("optimizer", OPTIMIZER_NAMES, OPTIMIZER_ALIASES)
        if self.recompute is not None:
            require_choice("recompute", self.recompute, RECOMPUTE_MODES)
        self._canonical("attention_impl", ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)
        require_choice("attention", self.attention, ATTENTION_CONVENTIONS)
        for name, maximum in (("global_batch", MAX_COUNT), ("tokens", MAX_TOKENS), ("gpus", MAX_COUNT)):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), 1, maximum)
        if self.dtype is not None:
            require_choice("dtype", self.dtype, COMPUTE_DTYPES)
        require_choice("finetune", self.finetune, FINETUNE_MODES)
        if self.stack is not None and (not isinstance(self.stack, str) or not self.stack):
            raise SizingError(f"stack ({self.stack!r}) must be a stack name (see `sizing parallel --help`) or None")
        require_choice("fp8_recipe", self.fp8_recipe, FP8_RECIPE_NAMES)
        if self.fp8_params is not None and not isinstance(self.fp8_params, bool):
            raise SizingError(f"fp8_params ({self.fp8_params!r}) must be true, false or None")
        if self.grad_reduce is not None:
            require_choice("grad_reduce", self.grad_reduce, GRAD_REDUCE_DTYPES)
        if self.loss is not None:
            require_choice("loss", self.loss, LOSS_KERNELS)
        if self.selective is not None:
            require_choice("selective", self.selective, SELECTIVE_POLICIES)
        if self.recompute_modules is not None:
            self._check_recompute_modules()
        if self.schedule is not None:
            require_choice("schedule", self.schedule, EXTRA_PIPELINE_SCHEDULES)

    def _check_recompute_modules(self) -> None:
        mods = self.recompute_modules
        if not isinstance(mods, tuple) or not mods:
            raise SizingError(
                f"recompute_modules ({mods!r}) must be a non-empty tuple of: {', '.join(RECOMPUTE_MODULES)}"
            )
        for name in mods:
            require_choice("recompute_modules", name, RECOMPUTE_MODULES)
        if len(set(mods)) != len(mods):
            raise SizingError(f"recompute_modules ({','.join(mods)}) names a module twice")
        if self.recompute not in (None, "selective"):
            raise SizingError(f"recompute_modules needs recompute selective (got {self.recompute})")
        if self.selective not in (None, "attention"):
            raise SizingError(f"recompute_modules is Megatron's selective recompute, not selective {self.selective}")

    def _canonical(self, name: str, choices: tuple[str, ...], aliases: dict[str, str]) -> None:
        value = getattr(self, name)
        if not isinstance(value, str):
            raise SizingError(f"{name} ({value!r}) must be one of: {', '.join(choices)}")
        object.__setattr__(self, name, require_choice(name, value, choices, aliases))

    @property
    def tokens_per_step(self) -> int | None:
        """global_batch x seq_len: the tokens of one optimizer step (None without a batch)."""
        return None if self.global_batch is None else self.global_batch * self.seq_len

    def with_(self, **changes) -> Workload:
        """A copy with some fields changed, checked again."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)


def as_workload(work) -> Workload:
    """`work` if it is a Workload; else one clear error naming what a question now takes."""
    if isinstance(work, Workload):
        return work
    raise SizingError(
        f"work ({work!r}) must be a sizing.inputs.Workload, e.g. Workload(seq_len=4096, precision='bf16-mixed'); "
        "the questions take the workload as one object, not its fields one by one"
    )
