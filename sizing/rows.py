"""The flat form of a result: one dict of scalars per model, with documented column names.

`Estimate.to_row()` returns it, `Estimate.to_frame()` and `sizing.sweep()` put rows into a pandas
DataFrame, `sizing compare --format csv` writes one per line. The columns and their meaning are
`COLUMNS` (docs/json.md lists them too); a column whose figure is unknown (no tokens, no memory
asked for) holds None. Counts, FLOPs and bytes are exact integers.

Pure Python: pandas is imported only inside `to_frame` (never by `sizing estimate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sizing.estimate import Estimate

# column -> meaning, in output order
COLUMNS: dict[str, str] = {
    "model": "preset name, config path or 'custom'",
    "params_total": "parameters, all of them (exact)",
    "params_active": "parameters used per token (MoE: top-k experts); = params_total for a dense model",
    "params_non_embedding": "params_total minus the token and learned-position lookup tables",
    "seq_len": "tokens per sequence T of the FLOP figures",
    "seq_len_source": "where seq_len came from: 'given', a preset's context, a config file field",
    "attention": "FLOP convention for attention: full (T keys per query) or causal",
    "recompute": "activation recomputation: none, selective or full",
    "forward_flops_per_token": "forward matmul FLOPs per token (2 per multiply-add)",
    "training_flops_per_token": "model FLOPs per training token: forward + backward (recomputation left out)",
    "flops_6n_per_token": "Kaplan's 6N approximation, 6 x params_active",
    "decode_flops_per_token": "inference: one new token with a KV cache of seq_len positions",
    "tokens": "training tokens (None: not given and not published)",
    "training_flops": "training_flops_per_token x tokens",
    "training_flops_6n": "6N x tokens",
    "gpu": "GPU key (sizing gpus)",
    "dtype": "dtype of the peak rate used",
    "mfu": "model FLOPs utilisation assumed",
    "num_gpus": "GPUs, for the wall-clock days",
    "gpu_hours": "training_flops / (peak x MFU) / 3600",
    "gpu_hours_6n": "the same from training_flops_6n",
    "days": "wall-clock days: gpu_hours / num_gpus / 24",
    "price_per_gpu_hour": "USD per GPU-hour (None: not given)",
    "cost_usd": "gpu_hours x price_per_gpu_hour",
    "inference_memory_bytes": "bf16 weights + bf16 KV cache at seq_len, batch 1",
    "inference_fits": "inference_memory_bytes fits one GPU",
    "training_memory_bytes": "training bytes per GPU: bf16-mixed AdamW, micro-batch 1, no ZeRO, no recompute; "
    "with num_gpus, the most-loaded GPU of the assumed layout",
    "training_fits": "training_memory_bytes fits one GPU",
    "training_max_micro_batch": "largest micro-batch that fits one GPU in that setting (None: not even 1)",
}


def estimate_row(est: Estimate, seq_len_source: str | None = None) -> dict[str, Any]:
    """The flat row of an Estimate (keys: COLUMNS, in order)."""
    from sizing.formulas import model_flops_per_token

    fl, p, t, m = est.flops, est.params, est.training, est.memory
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        model=est.name,
        params_total=p.total,
        params_active=p.active,
        params_non_embedding=p.non_embedding,
        seq_len=fl.seq_len,
        seq_len_source=seq_len_source if seq_len_source is not None else est.seq_len_source,
        attention=fl.attention,
        recompute=fl.recompute,
        forward_flops_per_token=fl.per_token(fl.forward),
        training_flops_per_token=model_flops_per_token(fl),
        flops_6n_per_token=est.kaplan_6n_per_token,
        decode_flops_per_token=est.decode_per_token,
    )
    if t is not None:
        row.update(
            tokens=t.run.tokens,
            training_flops=t.flops,
            training_flops_6n=t.flops_6n,
            gpu=t.gpu.key,
            dtype=t.dtype,
            mfu=t.run.mfu,
            num_gpus=t.run.num_gpus,
            gpu_hours=t.gpu_hours,
            gpu_hours_6n=t.gpu_hours_6n,
            days=t.wall_clock_days,
            price_per_gpu_hour=t.run.price_per_gpu_hour,
            cost_usd=t.cost_usd,
        )
    if m is not None:
        row.update(
            gpu=m.training.gpu,
            inference_memory_bytes=m.inference.total_bytes,
            inference_fits=m.inference.fits,
            training_memory_bytes=m.training.per_gpu_bytes,
            training_fits=m.training.fits,
            training_max_micro_batch=m.training.max_micro_batch,
        )
    return row


def rows_frame(rows: list[dict[str, Any]], columns: list[str] | None = None):
    """A pandas DataFrame of rows (pandas imported here, only when a frame is asked for).
    Integer columns stay exact: a column of Python ints too large for int64 is kept as objects."""
    import pandas as pd

    columns = columns or (list(rows[0]) if rows else list(COLUMNS))
    data = {c: [r.get(c) for r in rows] for c in columns}
    out = {}
    for c, values in data.items():
        ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        wide = any(abs(v) >= 2**63 for v in ints)
        out[c] = pd.Series(values, dtype=object) if wide or (ints and None in values) else values
    return pd.DataFrame(out, columns=columns)
