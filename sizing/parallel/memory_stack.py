"""How each training stack stores memory: its kernels' saved activations, its selective
checkpointing, its gradient buffer and how its fp8 GEMMs keep weights and inputs. One entry per
stack of sizing/data/step_time.json (a test checks it), so a plan's memory and its step time
describe the same software.

* megatron-core: Megatron-Core with Transformer Engine. Fused norms and activations
  (sizing.memory.stack_activations). The gradient buffer is fp32 for bf16 training: Megatron-LM
  sets --accumulate-allreduce-grads-in-fp32 for --bf16 unless --grad-reduce-in-bf16
  (megatron/training/arguments.py), and NeMo 2 / Megatron-Bridge default to
  grad_reduce_in_fp32=True (nemo/collections/llm/recipes/precision/mixed_precision.py). With the
  distributed optimizer (ZeRO-1 over dp x cp) that is 2 + 4 + 12/d bytes per parameter
  (docs/source/distrib_optimizer.md: "bf16 param, fp32 grads: 6 + 12/d"). fp8 runs follow
  Megatron-LM's own fp8 recipe (examples/llama/train_llama3_8b_h100_fp8.sh: --grad-reduce-in-bf16)
  and NeMo's (NeMo-Framework-Launcher examples/training/llama/h100/llama3_8b_fp8.sh:
  optim.grad_sync_dtype=bf16): bf16 gradients (Megatron-Bridge's bf16_with_fp8_mixed keeps
  grad_reduce_in_fp32=True: --grad-reduce fp32). TE saves fp8 GEMM inputs (sizing.memory.fp8),
  and the weights are primary fp8 tensors, as the Megatron family's fp8 recipes set them:
  Megatron-LM's example (--fp8-param-gather), NeMo 2.0's bf16_with_fp8_mixed (fp8_params=True),
  Megatron-Bridge's (fp8_param_gather = True). The GEMM weights then keep only their fp8 data and
  its transpose, no bf16 copy; fp8_params=False counts TE's default (bf16 parameters plus the
  cached fp8 copies).
* megatron-2021, megatron-deepspeed: Megatron-LM's fused kernels of 2021-22 (fused LayerNorm,
  bias-GeLU, scale-mask-softmax), 16-bit gradients as their step-time entries reduce them.
* fsdp, llama3 (the Llama 3 / OPT stacks): fused kernels, bf16 gradient reduction.
* composer (MosaicML Composer + llm-foundry): eager kernels, torch FSDP, fp32 gradient reduction
  under mixed precision DEFAULT (a row states bf16 under PURE), fp8 through Transformer Engine
  (Composer's amp_fp8 swaps in te.Linear), flash-attn's fused cross-entropy.
* Cross-entropy: "eager" (torch F.cross_entropy on fp32 logits) keeps the fp32 log-softmax and,
  in backward, the logits and their fp32 gradient (4 saved + a + 4 working bytes per logit);
  "fused" keeps one fp32 softmax and writes the gradient into it: Megatron's
  vocab_parallel_cross_entropy (megatron/core/tensor_parallel/cross_entropy.py:
  `torch.exp(vocab_parallel_logits, out=exp_logits)`, `ctx.save_for_backward(exp_logits, ...)`,
  the gradient computed in place), 4 saved + the a-byte logits. flash-attn's cross-entropy
  (llm-foundry's fused_crossentropy) keeps only the bf16 logits; counted as Megatron's.
* torchtitan-eager / torchtitan-compile: eager ops (the reference model's terms) or Inductor's
  fused ones, op-level selective checkpointing, FSDP2 with fp32 gradient reduction
  (mixed_precision_reduce float32). Float8 through torchao saves the bf16 inputs of its GEMMs
  (torchao/float8/float8_linear.py: `ctx.save_for_backward(input_hp, weight_hp_t)`) and keeps no
  fp8 weight copies between GEMMs.

* hai-llm (DeepSeek's HAI-LLM, DeepSeek-V3 Technical Report, arXiv:2412.19437): fp32 gradients
  ("the master weights ... and gradients ... are still retained in FP32", sec. 3.3.3) and fused
  kernels, plus what sec. 3.2.3 "Extremely Memory Saving with Minimal Overhead" and sec. 3.3.3
  "Low-Precision Storage and Communication" state, each a named convention below:
  - `recomputed` "norm": "We recompute all RMSNorm operations ... during back-propagation": a
    norm keeps its input and statistics, not its output (sizing.memory.stack_activations);
  - `recomputed` "mla_up": "... and MLA up-projections": under MLA only the latents (q_a's output,
    kv_a's output with the RoPE key) are kept, not q, k, v (sizing.memory.mla_activations);
  - `recomputed` "swiglu": "we cache the inputs of the SwiGLU operator and recompute its output
    in the backward pass", in FP8 under fp8 training: the experts' down projection input is not
    kept; nor are the expert outputs, since with the SwiGLU output recomputed the routing
    weight's gradient is <W_down^T dy, swiglu(h)>, the down projection's dgrad against the
    recomputed output (derived, not stated; Megatron-Core's weighted SwiGLU does the same:
    megatron/core/fusions/fused_bias_swiglu.py `weighted_bias_swiglu_impl` saves its input and
    the weights only);
  - `attn_out_bits` 12: "Inputs of the Linear after the attention operator ... a customized E5M6
    data format", one copy serving both the attention's backward and the output projection's
    wgrad, with 1 x 128 tiles' scales;
  - `moment_bytes` 2: "We adopt the BF16 data format instead of FP32 to track the first and
    second moments in the AdamW optimizer" (the fp32 master weights stay: 4 + 2 + 2 = 8 bytes
    per parameter, sharded by ZeRO-1);
  - `ema` "cpu": "the EMA parameters are stored in CPU memory": fp32 copies of the rank's
    parameter shard (the dtype and the sharding are not stated: fp32 as the master weights,
    sharded as they are, assumed), a CPU term beside the GPU's.
  Under fp8 the GEMM inputs are cached in FP8 with 1 x 128 tiles (sec. 3.3.3: "caching
  activations in FP8 format for the backward pass of the Linear operator"), as TE's are; the
  weight copies are counted as TE keeps them (not stated). DualPipe's memory (two copies of the
  parameters, PP + 1 micro-batches in flight, sec. 3.2.1 and Table 2) follows from the schedule,
  not the stack (Workload.pp_schedule, sizing.parallel.dualpipe).

A stack without an entry here (added to step_time.json later) takes its step-time entry's
kernels ("elementwise"), selective kind and gradient bytes, with no fp8 copies.

`None` (no stack) is the reference model's accounting: eager terms, the precision's gradients,
nothing fp8-specific; sizing.parallel.memory's functions default to it, and the torch probes
check it byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from sizing.memory import get_precision
from sizing.parallel.stepdata import stack
from sizing.validate import SizingError, require_choice

GRAD_REDUCE_BYTES: dict[str, int] = {"fp32": 4, "bf16": 2}
# The stacks that run Megatron-Core's --recompute-modules (sizing.memory.stack_activations)
RECOMPUTE_MODULE_STACKS: tuple[str, ...] = ("megatron-core",)


@dataclass(frozen=True)
class MemoryStack:
    key: str
    kernels: str  # "eager" | "fused" (sizing.memory.stack_activations)
    selective: str  # "attention" | "op"
    grad_bytes: int  # gradient buffer element size, bf16 / fp16 training
    fp8: str  # "te" (Transformer Engine: fp8 weight copies, fp8 saved inputs) | "torchao" (neither)
    fp8_grad_bytes: int  # gradient buffer element size under fp8 training
    loss: str = "eager"  # "eager" (fp32 log-softmax) | "fused" (Megatron's in-place vocab-parallel cross-entropy)
    fp8_params: bool = False  # under fp8 (TE): primary fp8 weights, no bf16 copy of the GEMM weights
    recomputed: tuple[str, ...] = ()  # recomputed in backward beyond the recompute mode: norm, mla_up, swiglu
    attn_out_bits: int | None = None  # under fp8: the attention output kept once in this format (None: TE's)
    moment_bytes: int | None = None  # AdamW moment element size (None: the precision's)
    ema: str | None = None  # "cpu": an EMA of the parameters kept in CPU memory


MEMORY_STACKS: dict[str, MemoryStack] = {
    "megatron-2021": MemoryStack("megatron-2021", "fused", "attention", 2, "te", 2, "fused"),
    "megatron-deepspeed": MemoryStack("megatron-deepspeed", "fused", "attention", 2, "te", 2, "fused"),
    "megatron-core": MemoryStack("megatron-core", "fused", "attention", 4, "te", 2, "fused", fp8_params=True),
    "fsdp": MemoryStack("fsdp", "fused", "attention", 2, "torchao", 2),
    "llama3": MemoryStack("llama3", "fused", "attention", 2, "torchao", 2),
    "composer": MemoryStack("composer", "eager", "attention", 4, "te", 4, "fused"),
    "torchtitan-eager": MemoryStack("torchtitan-eager", "eager", "op", 4, "torchao", 4),
    "torchtitan-compile": MemoryStack("torchtitan-compile", "fused", "op", 4, "torchao", 4),
    # DeepSeek's HAI-LLM: fp32 gradients; under FP8 the GEMM inputs cached in FP8 (arXiv:2412.19437 sec. 3.3.3)
    # and the memory savings of sec. 3.2.3 and 3.3.3 (module docstring)
    "hai-llm": MemoryStack(
        "hai-llm",
        kernels="fused",
        selective="attention",
        grad_bytes=4,
        fp8="te",
        fp8_grad_bytes=4,
        loss="fused",
        recomputed=("norm", "mla_up", "swiglu"),
        attn_out_bits=12,
        moment_bytes=2,
        ema="cpu",
    ),
}


@dataclass(frozen=True)
class Conventions:
    """What a Workload's stack and precision settle for the memory terms."""

    kernels: str = "eager"
    selective: str = "attention"
    grad_bytes: int | None = None  # None: the precision's
    fp8_copies: bool = False  # TE's fp8 copies of each GEMM weight
    fp8_params: bool = False  # primary fp8 weights: no bf16 copy of the GEMM weights
    fp8_recipe: str | None = None  # fp8 GEMM inputs saved in fp8 (TE); None: bf16
    loss: str = "eager"
    recomputed: tuple[str, ...] = ()  # MemoryStack.recomputed
    attn_out_bits: int | None = None  # under fp8 only
    moment_bytes: int | None = None
    ema: str | None = None
    modules: tuple[str, ...] | None = None  # Megatron-Core's --recompute-modules (None: the selective kind's)

    def activation_kwargs(self) -> dict:
        extra = {} if self.modules is None else {"modules": self.modules}
        return extra | {
            "kernels": self.kernels,
            "selective": self.selective,
            "fp8_recipe": self.fp8_recipe,
            "loss": self.loss,
            "recomputed": self.recomputed,
            "attn_out_bits": self.attn_out_bits,
        }

    def transient_kwargs(self) -> dict:
        return self.activation_kwargs()


def memory_stack(key: str) -> MemoryStack:
    """The stack's entry, or one read off its step-time entry (sizing.parallel.stepdata.stack)."""
    if key in MEMORY_STACKS:
        return MEMORY_STACKS[key]
    st = stack(key)  # a SizingError naming the stacks for an unknown name
    return MemoryStack(key, st.elementwise, st.selective, st.grad_bytes, "torchao", st.grad_bytes)


def conventions(
    stack: str | None,
    precision: str,
    fp8_recipe: str,
    fp8_params: bool | None,
    grad_reduce: str | None,
    loss: str | None = None,
    selective: str | None = None,
    recompute_modules: tuple[str, ...] | None = None,
) -> Conventions:
    """The memory conventions of `stack` (None: the reference model's) at `precision`; fp8_params,
    grad_reduce ("fp32" / "bf16"), loss (the cross-entropy: eager, fused or chunked) and selective
    (what selective recompute drops: the attention core or op-level) override the stack's where given;
    recompute_modules (Megatron-Core's selective modules) needs a Megatron-Core stack."""
    conv = _stack_conventions(stack, precision, fp8_recipe, fp8_params, grad_reduce)
    if recompute_modules is not None and (stack not in RECOMPUTE_MODULE_STACKS or selective not in (None, "attention")):
        raise SizingError(
            f"recompute_modules is Megatron-Core's option: it needs stack {' or '.join(RECOMPUTE_MODULE_STACKS)} "
            f"(got {stack}) and selective attention"
        )
    pairs = (("loss", loss), ("selective", selective), ("modules", recompute_modules))
    changes = {k: v for k, v in pairs if v is not None}
    return replace(conv, **changes) if changes else conv


@cache
def _stack_conventions(
    stack: str | None, precision: str, fp8_recipe: str, fp8_params: bool | None, grad_reduce: str | None
) -> Conventions:
    fp8 = get_precision(precision).key == "fp8"
    grad = (
        None
        if grad_reduce is None
        else GRAD_REDUCE_BYTES[require_choice("grad_reduce", grad_reduce, GRAD_REDUCE_BYTES)]
    )
    if stack is None:
        if fp8_params:
            raise SizingError("fp8_params needs a Transformer Engine stack (stack megatron-core)")
        return Conventions(grad_bytes=grad)
    st = memory_stack(stack)
    te = fp8 and st.fp8 == "te"
    if fp8_params and not te:
        raise SizingError(f"fp8_params needs precision fp8 on a Transformer Engine stack (got {precision}, {stack})")
    primary_fp8 = st.fp8_params if fp8_params is None else fp8_params
    mixed = get_precision(precision).master_bytes > 0  # fp32 and pure bf16 keep their own gradients
    default_grad = (st.fp8_grad_bytes if fp8 else st.grad_bytes) if mixed else None
    return Conventions(
        kernels=st.kernels,
        selective=st.selective,
        grad_bytes=default_grad if grad is None else grad,
        fp8_copies=te,
        fp8_params=primary_fp8 and te,
        fp8_recipe=fp8_recipe if te else None,
        loss=st.loss,
        recomputed=st.recomputed,
        attn_out_bits=st.attn_out_bits if te else None,
        moment_bytes=st.moment_bytes if mixed else None,
        ema=st.ema,
    )


def work_conventions(work) -> Conventions:
    """The memory conventions of a Workload's stack at its precision (`conventions` above)."""
    return conventions(
        work.stack,
        work.precision,
        work.fp8_recipe,
        work.fp8_params,
        work.grad_reduce,
        work.loss,
        work.selective,
        work.recompute_modules,
    )
