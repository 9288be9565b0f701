"""Published training runs as data (sizing/data/published_steps.json) and the per-operation
step-time model's prediction for each, row by row.

A row's published step time comes from what its source reports:
* `step_seconds`: the iteration time itself (Korthikanti et al. 2022 Table 5; MT-NLG);
* `tflops_per_gpu` under the `narayanan-hfu` convention: FLOPs per iteration by Narayanan et
  al. 2021's formula, 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), which counts the recomputed
  forward (4 passes, not 3), / (TFLOP/s x GPUs). BLOOM's Megatron-DeepSpeed figure uses the same
  formula;
* `mfu` under the `model` convention (Llama 3): compared as MFU, model FLOPs over the bf16 peak;
* `tokens_per_second_per_gpu` (torchtitan's logged throughput): tokens per step / (rate x GPUs).

Beyond dp/tp/pp/cp a row's layout may state ep, etp, finetune, lora_rank and lora_targets, and
the row how its run stored memory where the source says so: grad_reduce_bytes (4 fp32, 2 bf16),
fp8_recipe, fp8_params (tests/test_published_memory.py checks that none is declared "does not
fit").

Rows of a group in FURTHER_GROUPS (other stacks, other GPUs) are the team's separate
generalisation check (within +-25%, median <= 12%); the rest are the rows the model is built on.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sizing.inputs import ModelConfig, get_preset
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.steptime import PredictedStep, StepOptions, predict_step

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "published_steps.json"
SECONDS_PER_DAY = 86400
FURTHER_GROUPS = ("torchtitan",)


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
        if "tokens_per_second_per_gpu" in self.published:  # logged throughput: tokens per step / rate
            tokens = self.layout.global_batch() * self.seq_len
            return tokens / (self.published["tokens_per_second_per_gpu"] * self.layout.world)
        return None

    def predict(self) -> PredictedStep:
        return predict_step(self.config, self.layout, self.seq_len, self.gpu, self.recompute, self.options)


def _config(row: dict) -> ModelConfig:
    if "preset" in row:
        return get_preset(row["preset"]).config
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
    )


@lru_cache(maxsize=1)
def published_runs() -> tuple[PublishedRun, ...]:
    rows = json.loads(DATA_FILE.read_text(encoding="utf-8"))["rows"]
    return tuple(_run(r) for r in rows)


def error_rows() -> list[dict]:
    """One dict per run: published and predicted step time (or MFU) and the relative error."""
    out = []
    for run in published_runs():
        pred = run.predict()
        published = run.published_step_seconds()
        row = {
            "name": run.name,
            "group": run.group,
            "gpu": run.gpu,
            "layout": run.layout.label(),
            "recompute": run.recompute,
            "stack": run.options.stack,
            "predicted_step_seconds": pred.step_seconds,
            "predicted_mfu": pred.mfu,
            "predicted_hfu": pred.hfu,
            "convention": run.convention,
            "source": run.source,
        }
        if published is not None:
            row["published_step_seconds"] = published
            row["error"] = pred.step_seconds / published - 1
        else:
            row["published_mfu"] = run.published["mfu"]
            row["mfu_points"] = 100 * (pred.mfu - run.published["mfu"])
        if "days" in run.published:
            steps = run.published["tokens"] / (run.layout.global_batch() * run.seq_len)
            row["published_days"] = run.published["days"]
            row["predicted_days"] = steps * pred.step_seconds / SECONDS_PER_DAY
        out.append(row)
    return out


def median_abs_error(rows: list[dict], further: bool = False) -> float:
    """Median |error| over the timed rows the model is built on, or (further=True) over the
    separate generalisation rows (FURTHER_GROUPS)."""
    timed = [r for r in rows if "error" in r and (r["group"] in FURTHER_GROUPS) == further]
    return statistics.median(abs(r["error"]) for r in timed)
