"""Published training runs as data (sizing/data/published_steps.json) and the per-operation
step-time model's prediction for each, row by row.

A row's published step time comes from what its source reports:
* `step_seconds`: the iteration time itself (Korthikanti et al. 2022 Table 5; MT-NLG);
* `tflops_per_gpu` under the `narayanan-hfu` convention: FLOPs per iteration by Narayanan et
  al. 2021's formula, 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), which counts the recomputed
  forward (4 passes, not 3), / (TFLOP/s x GPUs). BLOOM's Megatron-DeepSpeed figure uses the same
  formula;
* `mfu` under the `model` convention (Llama 3): compared as MFU, model FLOPs over the bf16 peak;
* `tokens_per_second_per_gpu` (torchtitan's, llm-foundry's and NeMo's logged throughput):
  tokens per step / (rate x GPUs), which needs no FLOP convention; `gpu_hours_per_trillion_tokens`
  (DeepSeek-V2 and V3's training cost) is the same rate, 10^12 / (hours x 3600) tokens/s per GPU;
* `mfu` under the `megatron-mfu` convention (MoE Parallel Folding, arXiv:2504.14960): Megatron-LM's
  own FLOPs per iteration (sizing.parallel.megatron_flops) / (MFU x the stated peak x GPUs);
* `tflops_per_gpu` under the `megatron-2024-tflops` convention (Megatron-LM's README H100 scaling
  table, July 2024): the same formula as it stood then, attention counted full, / (TFLOP/s x GPUs).

Beyond dp/tp/pp/cp a row's layout may state ep, etp, finetune, lora_rank and lora_targets, and
the row how its run stored memory where the source says so: grad_reduce_bytes (4 fp32, 2 bf16),
fp8_recipe, fp8_params (tests/test_published_memory.py checks that none is declared "does not
fit"), and what it ran that the step model times: flash_kernel, document_tokens, and for a
mixture of experts capacity_factor (a token-dropping run's cap; none: the dropless skew),
ep_overlap (what hid the all-to-alls) and schedule (zero-bubble, dualpipe).

Every row names its source (`source_id`, the unit of the leave-one-source-out cross-validation
in sizing.parallel.calibration) and the assumptions it needed (`notes`).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from sizing.inputs import ModelConfig, get_preset
from sizing.parallel.band import step_band
from sizing.parallel.calibration import Observation
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.megatron_flops import megatron_iteration_flops
from sizing.parallel.steptime import PredictedStep, StepOptions, predict_step

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "published_steps.json"
SECONDS_PER_DAY = 86400


@dataclass(frozen=True)
class PublishedRun:
    name: str
    group: str
    gpu: str
    config: ModelConfig
    seq_len: int
    layout: ParallelLayout
    recompute: str
    options: StepOptions
    published: dict
    convention: str
    source: str
    notes: str = ""
    source_id: str = ""  # the publication (one per paper / document): the unit of leave-one-source-out

    def narayanan_flops(self) -> float:
        """96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration (Narayanan et al. 2021, eq. (3))."""
        c, s, B = self.config, self.seq_len, self.layout.global_batch()
        h, layers, V = c.d_model, c.n_layers, c.padded_vocab
        return 96 * B * s * layers * h * h * (1 + s / (6 * h) + V / (16 * layers * h))

    def published_step_seconds(self) -> float | None:
        if "step_seconds" in self.published:
            return self.published["step_seconds"]
        if self.convention == "narayanan-hfu":
            return self.narayanan_flops() / (self.published["tflops_per_gpu"] * 1e12 * self.layout.world)
        tokens = self.layout.global_batch() * self.seq_len
        if self.convention == "megatron-mfu":
            flops = megatron_iteration_flops(self.config, self.seq_len, self.layout.global_batch())
            return flops / (self.published["mfu"] * self.published["peak_tflops"] * 1e12 * self.layout.world)
        if self.convention == "megatron-2024-tflops":  # logged TFLOP/s by the 2024 formula (full attention)
            flops = megatron_iteration_flops(self.config, self.seq_len, self.layout.global_batch(), causal_half=False)
            return flops / (self.published["tflops_per_gpu"] * 1e12 * self.layout.world)
        rate = self.published.get("tokens_per_second_per_gpu")
        if "gpu_hours_per_trillion_tokens" in self.published:  # GPU-hours per 10^12 tokens: the same rate
            rate = 1e12 / (self.published["gpu_hours_per_trillion_tokens"] * 3600)
        if rate is not None:  # logged throughput: tokens per step / rate
            return tokens / (rate * self.layout.world)
        return None

    def predict(self, overhead: float | None = None) -> PredictedStep:
        """The model's step for this run (the stack's fitted overhead, or `overhead` in its place)."""
        opts = self.options if overhead is None else replace(self.options, overhead=overhead)
        return predict_step(self.config, self.layout, self.seq_len, self.gpu, self.recompute, opts)

    def measured_seconds(self, pred: PredictedStep) -> float:
        """The published step in seconds; for a run that publishes only its MFU (Llama 3), the step
        that MFU implies with the model's FLOPs: model FLOPs per GPU / (MFU x peak)."""
        published = self.published_step_seconds()
        if published is not None:
            return published
        return pred.model_flops_per_gpu / (self.published["mfu"] * pred.peak_flops_per_second)

    def observation(self) -> Observation:
        """This run as a calibration observation (sizing.parallel.calibration): the prediction at
        zero overhead split into kernel time and the rest, against the published step."""
        pred = self.predict(0.0)
        return Observation(
            self.name,
            self.source_id,
            self.options.stack,
            self.gpu,
            self.config.is_moe,
            pred.step_seconds,
            pred.kernel_seconds,
            self.measured_seconds(pred),
        )


def _config(row: dict) -> ModelConfig:
    if "preset" in row:
        return get_preset(row["preset"]).config
    if "config" in row:  # the source's own architecture, every field named (ModelConfig's names)
        fields = dict(row["config"])
        if fields.get("position", "learned") == "learned":
            fields.setdefault("max_positions", row["seq_len"])
        return ModelConfig(**fields)
    m = row["model"]
    return ModelConfig(  # Megatron-LM's GPT: learned positions, LayerNorm, GeLU MLP of 4h, tied embeddings
        vocab_size=m["vocab_size"],
        d_model=m["d_model"],
        n_layers=m["n_layers"],
        n_heads=m["n_heads"],
        d_ff=4 * m["d_model"],
        max_positions=row["seq_len"],
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
        tied_embeddings=True,
    )


GRAD_REDUCE = {4: "fp32", 2: "bf16"}  # a row's grad_reduce_bytes as StepOptions.grad_reduce


def _memory_layout(lay: dict) -> dict:
    """The layout fields a row states beyond dp/tp/pp/cp: experts (ep, etp) and fine-tuning."""
    out = {k: lay[k] for k in ("ep", "etp", "finetune", "lora_rank") if k in lay}
    if "lora_targets" in lay:
        out["lora_targets"] = tuple(lay["lora_targets"])
    return out


def _memory_options(row: dict) -> dict:
    """How the row's run stored memory where its source says (sizing.parallel.memory_stack):
    gradient buffer bytes, fp8 recipe, primary fp8 weights; the stack's otherwise."""
    out = {k: row[k] for k in ("fp8_recipe", "fp8_params") if k in row}
    if "grad_reduce_bytes" in row:
        out["grad_reduce"] = GRAD_REDUCE[row["grad_reduce_bytes"]]
    return out


def _run(row: dict) -> PublishedRun:
    lay = row["layout"]
    dp, b = lay["dp"], lay["micro_batch"]
    v = lay.get("v", 1)
    layout = ParallelLayout(
        dp=dp,
        tp=lay["tp"],
        pp=lay["pp"],
        cp=lay.get("cp", 1),
        zero=lay.get("zero", 0),
        fsdp=lay.get("fsdp"),
        sequence_parallel=lay.get("sp", False),
        pp_schedule="interleaved" if v > 1 else "1f1b",
        v=v,
        micro_batch=b,
        micro_batches=lay["global_batch"] // (dp * b),
        **_memory_layout(lay),
    )
    stage_layers = tuple(row["stage_layers"]) if "stage_layers" in row else None
    options = StepOptions(
        stack=row["stack"],
        attention_kernel=row["attention_kernel"],
        dropout=row.get("dropout"),
        stage_layers=stage_layers,
        precision=row.get("precision", "bf16"),
        hbm_tbs=row.get("hbm_tbs"),
        power_limit_w=row.get("power_limit_w"),
        grad_bytes=row.get("grad_reduce_bytes"),
        flash_kernel=row.get("flash_kernel"),
        document_tokens=row.get("document_tokens"),
        capacity_factor=row.get("capacity_factor"),
        schedule=row.get("schedule"),
        ep_overlap=row.get("ep_overlap"),
        unfolded_experts=row.get("unfolded_experts", False),
        routed_groups=row.get("routed_groups"),
        **_memory_options(row),
    )
    return PublishedRun(
        row["name"],
        row["group"],
        row["gpu"],
        _config(row),
        row["seq_len"],
        layout,
        row["recompute"],
        options,
        dict(row["published"]),
        row["convention"],
        row["source"],
        row.get("notes", ""),
        row.get("source_id", row["group"]),
    )


@lru_cache(maxsize=1)
def published_runs() -> tuple[PublishedRun, ...]:
    rows = json.loads(DATA_FILE.read_text(encoding="utf-8"))["rows"]
    return tuple(_run(r) for r in rows)


def error_rows() -> list[dict]:
    """One dict per run: its measured and predicted step (with the fitted stack overheads), the
    error (predicted / measured - 1), its leave-one-source-out error and the band a prediction of
    its kind carries (sizing.parallel.band). MFU rows (Llama 3) compare steps through the MFU's
    implied step and also give the MFU in points."""
    cv = {r["name"]: r for r in cv_table()}
    out = []
    for run in published_runs():
        pred = run.predict()
        measured = run.measured_seconds(pred)
        band = step_band(pred.step_seconds, run.options.stack, run.gpu, run.config.is_moe)
        row = {
            "name": run.name,
            "group": run.group,
            "source_id": run.source_id,
            "gpu": run.gpu,
            "layout": _layout_label(run),
            "recompute": run.recompute,
            "stack": run.options.stack,
            "predicted_step_seconds": pred.step_seconds,
            "measured_step_seconds": measured,
            "error": pred.step_seconds / measured - 1,
            "cv_error": cv[run.name]["cv_error"] if run.name in cv else None,
            "band": band.to_dict(),
            "predicted_mfu": pred.mfu,
            "predicted_hfu": pred.hfu,
            "convention": run.convention,
            "source": run.source,
        }
        if run.published_step_seconds() is None:
            row["published_mfu"] = run.published["mfu"]
            row["mfu_points"] = 100 * (pred.mfu - run.published["mfu"])
        elif run.convention == "megatron-mfu":  # its MFU is Megatron's FLOPs over the stated peak, not ours
            row["published_mfu"] = run.published["mfu"]
        if "days" in run.published:
            steps = run.published["tokens"] / (run.layout.global_batch() * run.seq_len)
            row["published_days"] = run.published["days"]
            row["predicted_days"] = steps * pred.step_seconds / SECONDS_PER_DAY
        out.append(row)
    return out


def _layout_label(run: PublishedRun) -> str:
    """The layout as ParallelLayout labels it, with the pipeline schedule the run states."""
    label = run.layout.label()
    return label.replace("1f1b", run.options.schedule) if run.options.schedule else label


def cv_table() -> list[dict]:
    """The stored cross-validation rows (sizing/data/step_time_cv.json)."""
    from sizing.parallel.band import _cv_rows

    return list(_cv_rows())


def median_abs_error(rows: list[dict], key: str = "error", sources: tuple[str, ...] | None = None) -> float:
    """Median |error| (or |cv_error|) over the rows, or over those of `sources`."""
    picked = [r[key] for r in rows if r.get(key) is not None and (sources is None or r["source_id"] in sources)]
    return statistics.median(abs(e) for e in picked)


# The publications the per-operation model was first built on (Megatron-LM, MT-NLG, BLOOM, Llama 3)
FIRST_SOURCES = ("narayanan2021", "korthikanti2022", "mt-nlg", "bloom", "llama3")
