"""Estimate.to_row() / to_frame(): the flat form, its documented columns, exact integers."""

import json

import pytest

from sizing import estimate
from sizing.rows import COLUMNS


def test_to_row_has_every_documented_column_in_order_and_exact_counts():
    est = estimate("llama2-7b", gpu="h100", num_gpus=1024, price_per_gpu_hour=2.0)
    row = est.to_row()
    assert list(row) == list(COLUMNS)
    assert row["params_total"] == 6_738_415_616 and row["params_active"] == row["params_total"]
    assert row["forward_flops_per_token"] == 15_361_638_400  # docs/conventions.md worked example
    assert row["training_flops_per_token"] == 46_084_915_200
    assert row["training_flops"] == 46_084_915_200 * 2 * 10**12 and isinstance(row["training_flops"], int)
    assert row["gpu"] == "h100-sxm" and row["gpu_hours"] == est.training.gpu_hours
    assert row["days"] == pytest.approx(row["gpu_hours"] / 1024 / 24)
    assert row["cost_usd"] == pytest.approx(2.0 * row["gpu_hours"])
    assert row["training_memory_bytes"] == est.memory.training.per_gpu_bytes
    assert row["inference_memory_bytes"] == est.memory.inference.total_bytes
    assert row["seq_len"] == 4096 and row["seq_len_source"] == "llama2-7b's training context"
    json.dumps(row, allow_nan=False)  # strict JSON


def test_row_without_tokens_or_memory_holds_none():
    from sizing import get_preset

    row = estimate(get_preset("gpt2").config, seq_len=1024, memory=False).to_row()
    assert row["tokens"] is row["gpu_hours"] is row["training_memory_bytes"] is None
    assert row["params_total"] == 124_439_808


def test_every_column_is_documented_in_docs_planning():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "planning.md").read_text()
    missing = [c for c in COLUMNS if f"`{c}`" not in text]
    assert not missing


def test_to_frame_is_one_row_with_exact_integers():
    pytest.importorskip("pandas")
    frame = estimate("mixtral-8x7b", tokens="1T").to_frame()
    assert frame.shape == (1, len(COLUMNS)) and list(frame.columns) == list(COLUMNS)
    assert int(frame["params_total"].iloc[0]) == 46_702_792_704
    assert int(frame["params_active"].iloc[0]) == 12_879_925_248  # as tests/test_params.py
    # 1e12 tokens x FLOPs per token does not fit int64: kept as an exact Python int
    assert frame["training_flops"].iloc[0] == estimate("mixtral-8x7b", tokens="1T", memory=False).training.flops
