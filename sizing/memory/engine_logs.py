"""Engine start-up logs (sizing/data/engine_logs.json) beside sizing.memory.engine_memory: each
row run with the settings it logged, its predicted KV tokens (or KV memory) and the error.

The prediction uses what a user can pass: the model, GPU, tp, utilization, max_model_len and the
profiling batch the row names (the engine's defaults otherwise); the logged total memory where
the log prints it (the GPU's reported memory otherwise). It does not use the logged weights,
activations or non-torch memory: those are what the model predicts, shown beside.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sizing.inputs import GIB, ModelConfig, data_files, get_preset
from sizing.memory.engine import EngineMemory, EngineRun, engine_memory_for


@dataclass(frozen=True)
class EngineLog:
    id: str
    engine: str
    profile: str
    model: str
    config: ModelConfig
    max_positions: int
    gpu: str
    tp: int
    utilization: float
    max_model_len: int
    max_num_batched_tokens: int | None
    max_num_seqs: int | None
    weights: str
    kv_dtype: str
    logged: dict
    compare: str
    source: str

    def predict(self) -> EngineMemory:
        total = self.logged.get("total_gib")
        run = EngineRun(
            self.engine,
            self.utilization,
            self.max_num_batched_tokens,
            self.max_num_seqs,
            profile=self.profile,
            gpu_memory_bytes=None if total is None else round(total * GIB),
        )
        return engine_memory_for(
            self.config, self.weights, self.max_model_len, self.gpu, run, self.kv_dtype, self.tp, self.max_positions
        )

    def predicted_and_logged(self) -> tuple[float, float]:
        """(predicted, logged) of the compared figure: KV tokens, or KV GiB."""
        e = self.predict()
        if self.compare == "kv_gib":
            return e.kv_budget_bytes / GIB, self.logged["kv_gib"]
        if self.compare == "kv_tokens_from_logged_kv":  # the block arithmetic alone
            blocks = round(self.logged["kv_gib"] * GIB) // (e.block_size * e.kv_bytes_per_token)
            return blocks * e.block_size, self.logged["kv_tokens"]
        return e.kv_tokens, self.logged["kv_tokens"]

    @property
    def error(self) -> float:
        """predicted / logged - 1."""
        predicted, logged = self.predicted_and_logged()
        return predicted / logged - 1


def _row(r: dict) -> EngineLog:
    if "config" in r:
        config, positions = ModelConfig.from_dict(r["config"]), r.get("max_positions", r["max_model_len"])
    else:
        preset = get_preset(r["model"])
        config, positions = preset.config, r.get("max_positions", preset.serving_context)
    return EngineLog(
        r["id"],
        r["engine"],
        r.get("profile", "v1"),
        r["model"],
        config,
        positions,
        r["gpu"],
        r["tp"],
        r["utilization"],
        r["max_model_len"],
        r.get("max_num_batched_tokens"),
        r.get("max_num_seqs"),
        r["weights"],
        r["kv_dtype"],
        r["logged"],
        r["compare"],
        r["source"],
    )


@cache
def startup_logs() -> tuple[EngineLog, ...]:
    return tuple(_row(r) for r in data_files.builtin("engine_logs.json")["rows"])
