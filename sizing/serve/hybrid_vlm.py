"""Serving what people serve beyond attention + MLP stacks, on the same step model (StepModel,
the GPU's calibrated efficiencies and overheads):

* a hybrid (Mamba-2 / DeltaNet layers beside attention layers, sizing.hybrid): its prefill and
  decode FLOPs (sizing.hybrid.model), and per decode step the weights, the KV cache of its
  attention layers at the context and the recurrent state read and written (sizing.hybrid.memory:
  the state does not grow with the context, so a hybrid serves long contexts with a small cache);
* a vision-language model (sizing.vision): its language model served by `serve` with the image
  tokens in the prompt, plus the vision tower's prefill (every image's encoder and projector
  FLOPs, the tower's weights read once) before the first token; the tower's and projector's
  weights join the memory.

    hybrid step  = roofline(b·decode FLOPs(C), weights + KV of the attention layers at C + 2 x state)
    VLM TTFT     = tower(b·N images) + the language model's prefill over P + N·tokens per image

A hybrid's weights are all read each step (an MoE hybrid's experts too: an upper bound) and split
evenly over tp, as its KV cache and state are (heads and channels split by rank).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.inputs import get_gpu
from sizing.memory import dtype_bytes
from sizing.serve.estimate import StepModel, serve, serve_settings_for
from sizing.serve.roofline import compute_seconds, memory_seconds, sum_of_steps
from sizing.validate import require_int


@dataclass(frozen=True)
class OtherServe:
    """A hybrid or a VLM served: latency, throughput and memory per GPU, with the notes."""

    name: str
    kind: str  # "hybrid" | "vlm"
    gpu: str
    batch: int
    prompt: int  # the language model's prompt (a VLM's image tokens included)
    output: int
    tp: int
    ttft_seconds: float
    tpot_seconds: float
    memory: dict[str, int]  # bytes per GPU by term
    gpu_memory_bytes: int
    notes: tuple[str, ...] = field(default=())

    @property
    def tokens_per_second(self) -> float:
        """Decode tokens/s of the batch (one replica)."""
        return self.batch / self.tpot_seconds

    @property
    def memory_bytes(self) -> int:
        return sum(self.memory.values())

    @property
    def fits(self) -> bool:
        return self.memory_bytes <= self.gpu_memory_bytes

    def to_dict(self) -> dict:
        return {
            "model": self.name,
            "kind": self.kind,
            "gpu": self.gpu,
            "batch": self.batch,
            "prompt_tokens": self.prompt,
            "output_tokens": self.output,
            "tp": self.tp,
            "ttft_seconds": self.ttft_seconds,
            "tpot_seconds": self.tpot_seconds,
            "tokens_per_second": self.tokens_per_second,
            "memory_bytes_per_gpu": self.memory,
            "memory_bytes": self.memory_bytes,
            "gpu_memory_bytes": self.gpu_memory_bytes,
            "fits": self.fits,
            "notes": list(self.notes),
        }


def _hybrid_bytes(m, context: int, batch: int, weight_dtype: str, kv_dtype: str) -> dict[str, int]:
    """Whole-replica bytes of a decode step at `context`: weights, KV of the attention layers,
    the state read and written."""
    from sizing.hybrid import hybrid_inference_memory

    mem = hybrid_inference_memory(m, context, batch, weight_dtype, kv_dtype)
    state = mem.conv_state_bytes + mem.ssm_state_bytes
    return {"weights": mem.weights_bytes, "kv": mem.kv_cache_bytes, "state": 2 * state}


def serve_hybrid(
    preset, prompt: int, output: int, batch: int = 1, gpu: str = "h100", tp: int = 1, weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
) -> OtherServe:  # fmt: skip
    """A hybrid (a preset's name, or a sizing.hybrid.HybridModel read from a config) served as a static
    batch on the step model (module docstring)."""
    from sizing.hybrid import decode_flops_per_token, hybrid_inference_memory, hybrid_preset, prefill_flops

    m = hybrid_preset(preset).model() if isinstance(preset, str) else preset
    name = preset if isinstance(preset, str) else m.name
    require_int("prompt", prompt)
    require_int("output", output, minimum=2)
    entry = get_gpu(gpu)
    machine = StepModel(
        m.base, entry, serve_settings_for(m.base, entry, prompt + 1, batch, weight_dtype, kv_dtype, tp=tp)
    )

    def step(context: int, tokens: int, flops: int, prefill: bool = False):
        parts = _hybrid_bytes(m, context, batch, weight_dtype, kv_dtype)
        return machine.roofline(flops, sum(parts.values()) / tp, tokens, batch, prefill, kv_bytes=parts["kv"] / tp)

    ttft = step(prompt, batch * prompt, batch * prefill_flops(m, prompt), prefill=True).seconds

    def seconds_at(context: int) -> tuple[float, float, float]:
        r = step(context, batch, batch * decode_flops_per_token(m, context))
        return r.compute_seconds, r.memory_seconds, r.comm_seconds + r.overhead_seconds

    decode = sum_of_steps(seconds_at, prompt + 1, prompt + output - 1)
    mem = hybrid_inference_memory(m, prompt + output, batch, weight_dtype, kv_dtype)
    memory = {
        "weights": -(-mem.weights_bytes // tp),
        "kv_cache": -(-mem.kv_cache_bytes // tp),
        "state": -(-(mem.conv_state_bytes + mem.ssm_state_bytes) // tp),
    }
    notes = (
        f"hybrid: {m.count(mixer='attention')} attention layers of {m.base.n_layers} hold a KV cache; the state of the "
        "others is read and written each step, whatever the context",
        "prefill attention counted full (T keys per query, sizing.hybrid's convention); an MoE hybrid reads every "
        "expert each step (an upper bound)",
    )
    return OtherServe(
        name, "hybrid", entry.key, batch, prompt, output, tp, ttft, decode / (output - 1), memory,
        entry.memory_bytes, notes,
    )  # fmt: skip


def serve_vlm(
    preset, prompt: int, output: int, batch: int = 1, gpu: str = "h100", tp: int = 1, weight_dtype: str = "bf16",
    kv_dtype: str = "bf16", images: int = 1, image_size: tuple[int, int] = (896, 896), name: str | None = None,
) -> OtherServe:  # fmt: skip
    """A vision-language model (a preset's name, or the (language model, VisionLanguage) pair
    sizing.vision.vlm_from_hf_config reads from a config, named `name`) served: the language model by
    `serve` with the image tokens in the prompt, the tower's prefill before it (module docstring)."""
    from sizing.vision import vision_preset, vlm_from_hf_config

    text, vision = vlm_from_hf_config(vision_preset(preset).hf_config) if isinstance(preset, str) else preset
    name = preset if isinstance(preset, str) else (name or "vision-language model")
    images = require_int("images", images, minimum=0)
    image_tokens = images * vision.image_tokens(*image_size) if images else 0
    lm = serve(text, prompt + image_tokens, output, batch, gpu, tp, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    s, entry = lm.settings, get_gpu(gpu)
    tower_bytes = dtype_bytes(vision.total(), weight_dtype if weight_dtype in ("bf16", "fp16", "fp32") else "bf16")
    flops = batch * images * vision.image_flops(*image_size) / tp
    tower = max(
        compute_seconds(flops, lm.peak_flops_per_second, s.compute_efficiency),
        memory_seconds(tower_bytes / tp, entry.hbm_bytes_per_second, s.bandwidth_efficiency),
    ) + s.overhead.prefill * vision.tower.layers if images else 0.0  # fmt: skip
    memory = {
        "weights (language model)": lm.weights_bytes_per_gpu,
        "weights (vision tower + projector)": -(-tower_bytes // tp),
        "kv_cache": lm.kv_bytes_per_gpu,
        "prefill peak": lm.prefill_peak_bytes,
    }
    notes = (
        f"{images} image(s) of {image_size[0]}x{image_size[1]}: {image_tokens} image tokens in each prompt "
        f"({prompt} text + {image_tokens}); the tower runs {batch * images} image(s) before the first token "
        f"({tower * 1e3:.1f} ms), its weights kept in 16 bits",
        *lm.notes,
    )
    return OtherServe(
        name, "vlm", entry.key, batch, prompt + image_tokens, output, tp, lm.ttft_seconds + tower,
        lm.tpot_seconds, memory, entry.memory_bytes, notes,
    )  # fmt: skip
