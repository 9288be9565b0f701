"""Time training steps of the reference model and set the figures beside sizing's predictions.

`profile_training(cfg, ProfileSettings(seq_len, micro_batch, ...))` builds the reference GPT,
runs warm-up steps, then times whole training steps (zero_grad, forward, backward, optimizer
step) and returns a `ProfileResult`: step time (median, min, max), tokens/s, achieved FLOP/s
by the formula's model FLOPs (forward + backward; `full` and `causal` attention conventions),
MFU against the GPU's dense peak for the dtype (sizing.inputs.hardware, found from
torch.cuda.get_device_name(); `peak_tflops` overrides), peak memory against sizing.memory,
and the GPU-hours the calculator predicts for the preset's published run at the measured MFU.

The modules beside this one: sizing.inputs.profile_settings (what to run, checked; torch-free), profile_env (the
device, driver and peak rate), profile_predict (sizing's predictions for the step),
profile_result (the figures and their renderings). The byte formulas are sizing's
(sizing/memory/step_peak.py).

Precision: the model is built *in* the dtype (bf16 / fp16 / fp32 weights, gradients and AdamW
states; no autocast, no fp32 master copy). That is sizing.memory's pure `bf16` policy (8 bytes
per parameter; fp16 has the same element sizes) or `fp32` (16 bytes), whose saved-activation
terms were derived from this very model in that dtype (reference_model/probes/memory.py), so
the measured peak can be set against the formula term for term. The matmuls and attention run
in the dtype exactly as under autocast; only the optimizer's update is cheaper than with an
fp32 master copy. fp16 runs without loss scaling: fine for timing, not for training. fp32 runs
leave TF32 off (torch's default for matmuls), so the fp32 peak is the right one.

Optimizer: torch.optim.AdamW, fused=True on CUDA (one kernel for all parameters); the plain
(for-loop) implementation on CPU.

Timing: on CUDA a pair of CUDA events around each step (recorded in stream order, so launch
gaps count), one synchronisation after the last step, median of the N step times. On CPU
time.perf_counter around each step (CPU kernels are synchronous). A CPU run is a functional
smoke test of the code path, never a performance figure.

Memory: on CUDA torch.cuda.max_memory_allocated() over the timed steps (reset after the
warm-up), beside sizing.memory's per-GPU total for the same settings (weights + gradients +
AdamW states + saved activations + transient) and beside `step_peak_estimate_bytes`, where
an eager step actually peaks (see its docstring). Under torch.compile the saved tensors are
inductor's, not the eager ones the formula describes.
"""

from __future__ import annotations

import datetime
import gc
import math
import time
from collections.abc import Callable

import torch

from reference_model.model import build
from reference_model.profile.env import environment, peak_rate
from reference_model.profile.predict import (
    model_flops_per_step,
    published_run_projection,
    reference_extras_bytes,
)
from reference_model.profile.result import Measurement, ProfileResult
from sizing.formulas import total_params
from sizing.inputs import ModelConfig, Preset, ProfileError, ProfileSettings, format_gib
from sizing.memory import step_peak_estimate_bytes, training_memory_in_dtype

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
LR = 1e-4  # any value: the step time does not depend on it


def profile_training(
    cfg: ModelConfig,
    settings: ProfileSettings,
    *,
    name: str | None = None,
    preset: Preset | None = None,
    command: str | None = None,
    check_fit: bool = True,
) -> ProfileResult:
    """Warm up, then time `settings.steps` training steps of the reference model for `cfg`. See
    the module docstring for the precision, optimizer, timer and memory conventions. Raises
    ProfileError for settings that cannot run (no CUDA, predicted not to fit, out of memory)."""
    s = settings
    s.check_model(cfg)
    dev = _device(s.device)
    env = environment(dev)
    gpu, peak, peak_source = peak_rate(env, s.dtype, s.peak_tflops)
    memory = training_memory_in_dtype(
        cfg, s.seq_len, s.micro_batch, s.dtype, s.attention_impl, s.recompute, gpu.key if gpu else None
    )
    extras = reference_extras_bytes(cfg, s.seq_len, s.micro_batch, s.dtype, s.attention_impl, s.recompute)
    if dev.type == "cuda" and check_fit:
        _check_fits(dev, env, memory, extras)
    measurement = _measure_or_explain(cfg, s, dev)

    flops = model_flops_per_step(cfg, s.seq_len, s.micro_batch, s.recompute)
    result = ProfileResult(
        model=name or "custom",
        config=cfg,
        preset=preset.name if preset else None,
        params=total_params(cfg),
        settings=s,
        env=env,
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        measurement=measurement,
        flops_per_step=flops,
        gpu=gpu,
        peak_flops_per_second=peak,
        peak_source=peak_source,
        memory=memory,
        reference_extras_bytes=extras,
        projection=None,
        command=command,
        notes=_notes(s, measurement.losses, preset),
    )
    result.projection = published_run_projection(preset, peak, result.mfu("full"), cfg, s.seq_len)
    return result


def _check_fits(dev: torch.device, env: dict, memory, extras: int) -> None:
    """Refuse before allocating when the predicted step peak exceeds the free GPU memory: a
    clear message beats an out-of-memory error deep in the first step."""
    free, _total = torch.cuda.mem_get_info(dev)
    need = max(memory.per_gpu_bytes, step_peak_estimate_bytes(memory, extras))
    if need > free:
        raise ProfileError(
            f"predicted {format_gib(need)} for this step, more than the {format_gib(free)} free on "
            f"{env['device_name']}: scale the model down with --set (e.g. --set n_layers=...), lower "
            "--micro-batch or --seq-len, or use --recompute full"
        )


def _measure_or_explain(cfg: ModelConfig, s: ProfileSettings, dev: torch.device) -> Measurement:
    """measure(), with CUDA out-of-memory turned into a ProfileError that says what to scale down."""
    try:
        return measure(cfg, s, dev)
    except torch.cuda.OutOfMemoryError as exc:
        torch.cuda.empty_cache()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "out of memory"
        raise ProfileError(
            f"CUDA out of memory ({first[:160]}); scale down with --set, --micro-batch, --seq-len or --recompute full"
        ) from None


def _device(name: str) -> torch.device:
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise ProfileError(f"device ({name!r}) is not a torch device: use cuda, cuda:N or cpu") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ProfileError(
            "no CUDA device: profiling times training steps on a GPU; "
            "--device cpu times a tiny run for testing (not a performance figure)"
        )
    return dev


def measure(cfg: ModelConfig, s: ProfileSettings, dev: torch.device) -> Measurement:
    """Build the model and AdamW, run `s.warmup` steps, then time `s.steps` steps."""
    cuda = dev.type == "cuda"
    baseline = None
    if cuda:  # what the process already holds (nothing in a fresh `sizing profile`; earlier tests' leftovers)
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.synchronize(dev)
        baseline = torch.cuda.memory_allocated(dev)
    model = build(
        cfg, dev, attn_impl=s.attention_impl, dtype=TORCH_DTYPES[s.dtype], seed=s.seed, checkpoint=s.recompute
    )
    model.train()
    if cuda:
        optimizer = torch.optim.AdamW(model.parameters(), lr=LR, fused=True)
        optimizer_name = "AdamW (fused=True)"
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=LR, foreach=False)
        optimizer_name = "AdamW (for-loop, CPU)"
    run = torch.compile(model) if s.compile else model

    generator = torch.Generator().manual_seed(s.seed)
    idx = torch.randint(0, cfg.vocab_size, (s.micro_batch, s.seq_len), generator=generator).to(dev)
    targets = torch.randint(0, cfg.vocab_size, (s.micro_batch, s.seq_len), generator=generator).to(dev)

    def step() -> torch.Tensor:
        optimizer.zero_grad(set_to_none=True)
        _, loss = run(idx, targets)
        loss.backward()
        optimizer.step()
        return loss.detach()

    for _ in range(s.warmup):
        step()
    if not cuda:
        times, losses = _time_on_cpu(step, s.steps)
        return Measurement(times, losses, optimizer_name, f"time.perf_counter per step, median of {s.steps}")
    torch.cuda.synchronize(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    times, losses = _time_on_cuda(step, s.steps, dev)
    return Measurement(
        times,
        losses,
        optimizer_name,
        f"CUDA events per step, median of {s.steps}",
        measured_peak_bytes=torch.cuda.max_memory_allocated(dev),
        allocated_after_step_bytes=torch.cuda.memory_allocated(dev),
        baseline_bytes=baseline,
    )


def _time_on_cuda(step: Callable[[], torch.Tensor], steps: int, dev: torch.device) -> tuple[list, list]:
    """A pair of CUDA events around each step, one synchronisation after the last."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(steps)]
    losses = []
    for start, end in events:
        start.record()
        losses.append(step())
        end.record()
    torch.cuda.synchronize(dev)
    return [start.elapsed_time(end) / 1e3 for start, end in events], [float(x) for x in losses]


def _time_on_cpu(step: Callable[[], torch.Tensor], steps: int) -> tuple[list, list]:
    """time.perf_counter around each step (CPU kernels are synchronous)."""
    times, losses = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    return times, [float(x) for x in losses]


def _notes(s: ProfileSettings, losses: list[float], preset: Preset | None) -> list[str]:
    notes = []
    if not s.on_cuda:
        notes.append(
            "CPU run: checks that the code path works; its timings are not performance figures and "
            "are not to be reported as such."
        )
    if s.compile:
        notes.append(
            "torch.compile: the memory formula describes the eager model's saved tensors; inductor "
            "saves its own (usually fewer), so the measured peak may sit below the eager estimate."
        )
    if s.dtype == "fp16":
        notes.append("fp16 weights without loss scaling: a timing run, not a recipe for training.")
    if not all(math.isfinite(x) for x in losses):
        notes.append("the loss was not finite in some timed steps (does not affect the timing).")
    if preset is not None and not preset.training_tokens:
        notes.append(f"{preset.name} has no published token count: no GPU-hours projection.")
    return notes


__all__ = ["TORCH_DTYPES", "ProfileError", "ProfileResult", "ProfileSettings", "measure", "profile_training"]
