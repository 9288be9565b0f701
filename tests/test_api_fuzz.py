"""The public Python API given wrong types and extreme numbers (issue 23): every call either
returns a result whose JSON is finite, or raises a ValueError (SizingError) with one line of
at most MAX_MESSAGE characters. Never AttributeError, TypeError, ZeroDivisionError or
OverflowError. Bounded: a fixed number of derandomized examples per function."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sizing
from sizing.inputs import Workload
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.plan import parallel_plan
from sizing.parallel.search import search_layout
from sizing.plan.compute_optimal import plan
from sizing.plan.sweeps import sweep_rows
from sizing.serve.estimate import serve
from sizing.validate import SizingError

MAX_MESSAGE = 400  # the longest one-line message a model name and a list of choices can make

HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, 1, -1, 2**53 + 1, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([5e-324, 1e-320, 1e308, -0.0]),
    st.sampled_from(["gpt2", "llama2-7b", "nope", "", "1T", "nan", "\nError: forged", "4096"]),
    st.lists(st.integers(0, 3), max_size=2),
    st.just({"a": 1}),
)
MODEL = st.one_of(st.sampled_from(["gpt2", "mixtral-8x7b", "GPT2", "nope", ""]), HOSTILE)
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _finite(value) -> None:
    """Any number inside a result is finite (json.dumps with allow_nan=False raises otherwise)."""
    data = value.to_dict() if hasattr(value, "to_dict") else value
    json.dumps(data, allow_nan=False, default=str)


def _call(func, *args, **kwargs):
    try:
        result = func(*args, **kwargs)
    except SizingError as exc:
        message = str(exc)
        assert "\n" not in message and 0 < len(message) <= MAX_MESSAGE, message
        return None
    if isinstance(result, (int, float)) and not isinstance(result, bool):
        assert math.isfinite(result)
    elif isinstance(result, (list, tuple)):
        for item in result:
            if hasattr(item, "to_dict"):
                _finite(item)
    else:
        _finite(result)
    return result


@FUZZ
@given(MODEL)
def test_parameter_counts(model):
    for func in (sizing.total_params, sizing.active_params, sizing.param_components):
        _call(func, model)


@FUZZ
@given(MODEL, HOSTILE, st.sampled_from(["full", "causal", "x", None]))
def test_flop_breakdown(model, seq_len, attention):
    _call(sizing.flop_breakdown, model, seq_len, attention)


@FUZZ
@given(HOSTILE, HOSTILE, HOSTILE)
def test_llama_ffn_dim(d_model, multiple_of, multiplier):
    _call(sizing.llama_ffn_dim, d_model, multiple_of, multiplier)


@FUZZ
@given(MODEL, HOSTILE, HOSTILE, HOSTILE, HOSTILE)
def test_estimate(model, tokens, mfu, num_gpus, price):
    _call(sizing.estimate, model, tokens=tokens, mfu=mfu, num_gpus=num_gpus, price_per_gpu_hour=price, memory=False)


@FUZZ
@given(MODEL, st.one_of(st.just(ParallelLayout()), HOSTILE), HOSTILE, HOSTILE)
def test_parallel_plan(model, layout, seq_len, mfu):
    _call(lambda: parallel_plan(model, layout, Workload(seq_len), mfu=mfu))


@settings(FUZZ, max_examples=15)
@given(MODEL, HOSTILE, HOSTILE)
def test_search_layout(model, seq_len, global_batch):
    _call(lambda: search_layout(model, Workload(seq_len, recompute=None, global_batch=global_batch), max_gpus=8))


@FUZZ
@given(HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE, HOSTILE)
def test_workload(seq_len, precision, recompute, global_batch, tokens, gpus):
    _call(Workload, seq_len, precision, recompute=recompute, global_batch=global_batch, tokens=tokens, gpus=gpus)


@FUZZ
@given(MODEL, st.one_of(HOSTILE, st.dictionaries(st.sampled_from(["mfu", "tokens", "n_layers", "x"]), HOSTILE)))
def test_sweep_rows(model, grid):
    _call(sweep_rows, model, grid)


@FUZZ
@given(HOSTILE, HOSTILE, HOSTILE, HOSTILE)
def test_plan(flops, gpus, days, mfu):
    _call(plan, flops, gpus=gpus, days=days, mfu=mfu) if flops is not None else _call(plan, gpus=gpus, days=days)


@FUZZ
@given(MODEL, HOSTILE, HOSTILE, HOSTILE, HOSTILE)
def test_serve(model, prompt, output, batch, price):
    _call(serve, model, prompt, output, batch=batch, price=price)


@pytest.mark.parametrize(
    "call",
    [
        lambda: sizing.total_params("gpt2"),
        lambda: sizing.active_params("mixtral-8x7b"),
        lambda: sizing.param_components("gpt2"),
        lambda: sizing.flop_breakdown("gpt2", 1024),
        lambda: parallel_plan("gpt2", ParallelLayout(), Workload(1024)),
        lambda: search_layout("gpt2", Workload(1024, recompute=None, global_batch=8), max_gpus=8),
    ],
)
def test_a_preset_name_is_accepted_where_a_config_is_expected(call):
    assert call() is not None


def test_the_issues_calls_answer_or_refuse_in_one_line():
    assert sizing.total_params("gpt2") == sizing.total_params(sizing.get_preset("gpt2").config) == 124_439_808
    for call, words in [
        (lambda: sizing.llama_ffn_dim(4096, 0), "multiple_of (0) must be a positive integer"),
        (lambda: sizing.total_params(3), "cfg (3) must be a ModelConfig, a Preset or a preset name"),
        (lambda: sweep_rows("gpt2", [1]), "grid ([1]) must be a dict"),
        (lambda: parallel_plan("gpt2", "tp=8", Workload(1024)), "layout ('tp=8') must be a ParallelLayout"),
        (lambda: parallel_plan("gpt2", ParallelLayout(), 1024), "work (1024) must be a sizing.inputs.Workload"),
    ]:
        with pytest.raises(SizingError) as info:
            call()
        assert words in str(info.value)


# ---- issue 34: hybrid and vision readers, hub ids, overrides and the plan's keyword options
def _family_config(family: str, name: str) -> dict:
    import copy

    from sizing.hybrid import hybrid_preset
    from sizing.vision import vision_preset

    return copy.deepcopy((hybrid_preset(name) if family == "hybrid" else vision_preset(name)).hf_config)


FAMILIES = [("hybrid", n) for n in ("mamba2-2.7b", "jamba-v0.1", "nemotron-h-8b", "bamba-9b", "qwen3-next-80b-a3b")]
FAMILIES += [("vision", n) for n in ("llava-1.5-7b", "qwen2.5-vl-7b", "gemma-3-4b", "llama-4-scout-full")]


@settings(FUZZ, max_examples=60)
@given(st.sampled_from(FAMILIES), st.data(), HOSTILE)
def test_family_readers_refuse_any_bad_field_in_one_line(family_name, data, value):
    """Any field of a hybrid or vision config (nested ones too) set to any hostile value: the
    model it reads is finite, or a SizingError line names the problem (items 2 and 16)."""
    from sizing.hybrid import hybrid_from_hf_config
    from sizing.hybrid.model import total_params
    from sizing.vision import vlm_from_hf_config, vlm_params

    family, name = family_name
    config = _family_config(family, name)
    target = config
    nested = [k for k, v in config.items() if isinstance(v, dict)]
    if nested and data.draw(st.booleans()):
        target = config[data.draw(st.sampled_from(nested))]
    target[data.draw(st.sampled_from(sorted(target)))] = value
    if family == "hybrid":
        model = _call(hybrid_from_hf_config, config)
        if model is not None:
            _call(total_params, model)
    else:
        read = _call(vlm_from_hf_config, config)
        if read is not None:
            _call(vlm_params, *read)


HUB_ALPHABET = st.sampled_from(list("ab-_.@/") + ["..", "--", "x" * 40])


@settings(FUZZ, max_examples=40)
@given(st.lists(HUB_ALPHABET, min_size=1, max_size=8).map("".join))
def test_hub_ids_are_read_or_refused_in_one_line(tmp_path_factory, hub_id):
    """Any owner/name@revision, offline with an empty cache: one SizingError line (item 6)."""
    import os

    from sizing.inputs.hf import load_config_file

    cache = tmp_path_factory.mktemp("hub")
    os.environ["HF_HUB_OFFLINE"], os.environ["HF_HUB_CACHE"] = "1", str(cache)
    try:
        _call(load_config_file, hub_id)
    finally:
        del os.environ["HF_HUB_OFFLINE"], os.environ["HF_HUB_CACHE"]


@FUZZ
@given(
    st.one_of(
        HOSTILE, st.dictionaries(st.sampled_from(["n_layers", "d_model", "x"]), HOSTILE), st.lists(st.text(max_size=8))
    )
)
def test_with_overrides(overrides):
    _call(sizing.get_preset("gpt2").config.with_overrides, overrides)


@FUZZ
@given(
    st.sampled_from(
        [
            "gpu",
            "mfu",
            "overlap",
            "nvlink_gbs",
            "network_gbs",
            "compute_efficiency",
            "fused",
            "name",
            "step_options",
        ]
    ),
    HOSTILE,
)
def test_parallel_plan_keywords(keyword, value):
    """Each keyword of parallel_plan given any value: a finite plan or one line (item 26)."""
    _call(parallel_plan, "gpt2", ParallelLayout(dp=2), Workload(1024), **{keyword: value})


@FUZZ
@given(
    st.sampled_from(
        ["tokens", "attention", "global_batch", "gpus", "dtype", "stack", "fp8_recipe", "fp8_params", "grad_reduce"]
    ),
    HOSTILE,
)
def test_workload_fields(field, value):
    """Each field of the Workload parallel_plan takes, given any value: a finite plan or one line (item 26)."""
    _call(lambda: parallel_plan("gpt2", ParallelLayout(dp=2), Workload(1024, **{field: value})))


@FUZZ
@given(st.sampled_from(["compute_efficiency", "bandwidth_efficiency", "gpu", "tp", "kv_dtype", "price"]), HOSTILE)
def test_serve_keywords(keyword, value):
    """Each keyword of serve given any value, 1e-320 among them: finite, or one line (items 3, 5)."""
    _call(serve, "llama2-7b", 512, 64, **{keyword: value})
