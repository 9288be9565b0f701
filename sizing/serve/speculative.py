"""Speculative decoding on the roofline: a cheap drafter proposes k tokens, the target model
verifies them in one forward of k + 1 tokens per sequence, and the accepted prefix plus one
token from the target are kept.

* Expected tokens per target step (Leviathan, Kalman & Matias 2023, "Fast Inference from
  Transformers via Speculative Decoding", eq. 1), each proposal accepted with probability alpha
  independently: E = (1 - alpha^(k+1)) / (1 - alpha); k + 1 at alpha = 1.
* Verify step: one target forward of k + 1 new tokens per sequence at context C: the FLOPs of
  k + 1 decode tokens (at C .. C + k), the weights read once (an MoE's experts for the b·(k + 1)
  tokens), the KV cache read once (sizing.serve.work.step_bytes with new_tokens = k + 1).
* Draft: k decode steps of the drafter at the same context: a separate draft model, or
  MTP / EAGLE-style heads built as one transformer block of the target sharing its embedding
  and lm_head (DeepSeek-V3's MTP module, arXiv:2412.19437 sec. 2.2, adds a 2d x d projection,
  counted here).
* Time per output token = (k x draft step + verify step) / E; speedup = target step / that.
  It pays when E exceeds (k x draft + verify) / target; the break-even acceptance rate solves
  that equality.

Each step is the serving step model's (sizing.serve.estimate.StepModel: the roofline at the
GPU's calibrated efficiencies, plus the engine's overhead per step), on one GPU (tp 1): the
target step is exactly `sizing serve`'s decode step at that context and batch. No
rejection-sampling or tree-attention overhead is counted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sizing.inputs import ModelConfig, get_gpu
from sizing.memory import dtype_bytes
from sizing.serve.quant_bytes import WEIGHT_CHOICES
from sizing.serve.roofline import NO_OVERHEAD, memory_seconds
from sizing.validate import SizingError, require_choice, require_int, require_number
from sizing.vocabulary import STORAGE_DTYPES


def expected_tokens_per_step(alpha: float, k: int) -> float:
    """(1 - alpha^(k+1)) / (1 - alpha): tokens one target step yields (Leviathan et al. 2023)."""
    require_number("acceptance", alpha, 0, 1, exclusive_minimum=False, what="a number in [0, 1]")
    require_int("k", k)
    if alpha == 1:
        return float(k + 1)
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def mtp_head_config(cfg: ModelConfig) -> ModelConfig:
    """One block of the target (an MoE block where the target has them) with its embedding and
    lm_head: the drafter an MTP or EAGLE-style head runs."""
    return dataclasses.replace(cfg, n_layers=1, first_dense_layers=0)


def mtp_projection_bytes(cfg: ModelConfig, weight_dtype: str) -> int:
    """DeepSeek-V3's MTP projection M: [norm(h); norm(emb)] (2d) -> d."""
    return dtype_bytes(2 * cfg.d_model * cfg.d_model, weight_dtype if weight_dtype in STORAGE_DTYPES else "bf16")


@dataclass(frozen=True)
class Speculation:
    k: int
    acceptance: float
    drafter: str  # "mtp" or the draft model's name
    target_step_seconds: float
    draft_step_seconds: float
    verify_step_seconds: float

    @property
    def tokens_per_step(self) -> float:
        return expected_tokens_per_step(self.acceptance, self.k)

    @property
    def round_seconds(self) -> float:
        """k draft steps + one verify step."""
        return self.k * self.draft_step_seconds + self.verify_step_seconds

    @property
    def seconds_per_token(self) -> float:
        return self.round_seconds / self.tokens_per_step

    @property
    def speedup(self) -> float:
        return self.target_step_seconds / self.seconds_per_token

    @property
    def break_even_tokens(self) -> float:
        """E at which speculation neither gains nor loses: round / target step."""
        return self.round_seconds / self.target_step_seconds

    @property
    def break_even_acceptance(self) -> float | None:
        """The alpha where speedup = 1 (bisection on the increasing E(alpha)); None when even
        alpha = 1 (k + 1 tokens per step) does not pay."""
        need = self.break_even_tokens
        if need > self.k + 1:
            return None
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if expected_tokens_per_step(mid, self.k) < need else (lo, mid)
        return hi

    def to_dict(self) -> dict:
        return {
            "k": self.k,
            "acceptance": self.acceptance,
            "drafter": self.drafter,
            "tokens_per_step": self.tokens_per_step,
            "target_step_seconds": self.target_step_seconds,
            "draft_step_seconds": self.draft_step_seconds,
            "verify_step_seconds": self.verify_step_seconds,
            "seconds_per_token": self.seconds_per_token,
            "speedup": self.speedup,
            "break_even_acceptance": self.break_even_acceptance,
        }


def speculate(
    cfg: ModelConfig,
    k: int,
    acceptance: float,
    draft: ModelConfig | None = None,
    context: int = 4096,
    batch: int = 1,
    gpu: str = "h100",
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    compute_efficiency: float | None = None,
    bandwidth_efficiency: float | None = None,
    draft_name: str | None = None,
) -> Speculation:
    """Speculative decoding of `cfg` with `draft` (a model) or, when draft is None, MTP heads.
    Every step is the serving step model's (sizing.serve.estimate.StepModel, tp 1): the target
    step is `sizing serve`'s decode step at this context and batch, at the GPU's calibrated
    efficiencies and overheads unless given."""
    expected_tokens_per_step(acceptance, k)  # checks both
    require_int("context", context)
    require_int("batch", batch)
    require_choice("weight_dtype", weight_dtype, WEIGHT_CHOICES)
    require_choice("kv_dtype", kv_dtype, STORAGE_DTYPES)
    if draft is None:
        drafter, extra = mtp_head_config(cfg), mtp_projection_bytes(cfg, weight_dtype)
    else:
        if draft.vocab_size != cfg.vocab_size:
            raise SizingError(
                f"draft vocab_size ({draft.vocab_size}) must equal the target's ({cfg.vocab_size}): "
                "the target verifies the draft's tokens"
            )
        drafter, extra = draft, 0
    effs = (compute_efficiency, bandwidth_efficiency)
    target = _step_model(cfg, gpu, context, batch, weight_dtype, kv_dtype, effs)
    drafting = _step_model(drafter, gpu, context, batch, weight_dtype, kv_dtype, effs, with_overhead=False)
    draft_step = drafting.decode_step(context).roofline
    draft_seconds = draft_step.seconds + memory_seconds(
        extra, drafting.gpu.hbm_bytes_per_second, drafting.s.bandwidth_efficiency
    )
    return Speculation(
        k,
        acceptance,
        draft_name or ("mtp" if draft is None else "draft"),
        target.decode_step(context).roofline.seconds,
        draft_seconds,
        target.verify_step(context, batch, k + 1).seconds,
    )


def _step_model(cfg: ModelConfig, gpu: str, context: int, batch: int, weights: str, kv: str, effs, with_overhead=True):
    """The step model `sizing serve` builds for this model at batch b, tp 1 (its checks included).
    The drafter's steps run inside the target's engine iteration (no scheduling or sampling of
    their own: `with_overhead` False); the verify step pays the iteration's overhead once."""
    from sizing.serve.estimate import serve_settings_for, serving_machine

    entry = get_gpu(gpu)
    settings = serve_settings_for(cfg, entry, context, batch, weights, kv, *effs)
    if not with_overhead:
        settings = dataclasses.replace(settings, overhead=NO_OVERHEAD)
    return serving_machine(cfg, entry, settings)
