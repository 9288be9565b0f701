"""sizing.sweep and `sizing sweep`: the grid, the lean path equal to estimate(), skipped points."""

import csv
import dataclasses
import io
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing import estimate, get_preset
from sizing.cli import main
from sizing.plan.sweeps import HEADLINE_COLUMNS, MEMORY_COLUMNS, parse_values, sweep_rows
from sizing.validate import SizingError


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_axes_parse_lists_and_inclusive_ranges():
    assert parse_values("n_layers", "16:64:8") == [16, 24, 32, 40, 48, 56, 64]
    assert parse_values("n_layers", "1:3") == [1, 2, 3]
    assert parse_values("d_model", "4096,5120") == ["4096", "5120"]  # the field's own parser reads text
    assert parse_values("n_layers", "8,16:32:8") == ["8", 16, 24, 32]
    assert parse_values("n_layers", 24) == [24]
    for bad in ("64:16", "1:2:0", "", "1:10000000"):
        with pytest.raises(SizingError):
            parse_values("n_layers", bad)


def test_grid_is_the_product_with_config_axes_outermost():
    rows, skipped = sweep_rows(
        "llama2-7b", {"n_layers": "24,32,48", "d_model": [4096, 5120], "tokens": "1T,2T", "gpu": "h100,b200"}
    )
    assert len(rows) == 3 * 2 * 2 * 2 and not skipped
    assert [(r["n_layers"], r["d_model"], r["tokens"], r["gpu"]) for r in rows[:3]] == [
        (24, 4096, 10**12, "h100-sxm"),
        (24, 4096, 10**12, "b200"),
        (24, 4096, 2 * 10**12, "h100-sxm"),
    ]
    assert rows[8]["n_layers"] == 32 and rows[8]["params_total"] == 6_738_415_616


@settings(max_examples=25, deadline=None)
@given(
    n_layers=st.integers(1, 96),
    d_model=st.sampled_from([1024, 2048, 4096, 5120, 8192]),
    kv=st.sampled_from([1, 8, 32]),
    tokens=st.integers(1, 10**13),
    attention=st.sampled_from(["full", "causal"]),
    recompute=st.sampled_from(["none", "selective", "full"]),
    seq_len=st.sampled_from([128, 2048, 4096, 4097]),
    model=st.sampled_from(["llama2-7b", "mixtral-8x7b", "mistral-7b"]),
)
def test_lean_rows_equal_estimate_exactly(n_layers, d_model, kv, tokens, attention, recompute, seq_len, model):
    grid = {
        "n_layers": [n_layers],
        "d_model": [d_model],
        "n_kv_heads": [kv],
        "tokens": [tokens],
        "attention": attention,
        "recompute": recompute,
        "seq_len": [seq_len],
        "gpu": "h100",
        "mfu": 0.45,
        "num_gpus": 64,
        "price_per_gpu_hour": 2.5,
    }
    rows, skipped = sweep_rows(model, grid)
    cfg = dataclasses.replace(get_preset(model).config, n_layers=n_layers, d_model=d_model, n_kv_heads=kv)
    ref = estimate(
        cfg,
        seq_len=seq_len,
        tokens=tokens,
        attention=attention,
        recompute=recompute,
        gpu="h100",
        mfu=0.45,
        num_gpus=64,
        price_per_gpu_hour=2.5,
        memory=False,
    ).to_row()
    assert not skipped and len(rows) == 1
    for column in HEADLINE_COLUMNS:
        assert rows[0][column] == ref[column] and type(rows[0][column]) is type(ref[column]), column


def test_invalid_points_are_skipped_with_their_reason():
    rows, skipped = sweep_rows("llama2-7b", {"n_heads": "32,40,x", "d_model": [4096, 5120], "mfu": [0.4]})
    assert {(r["n_heads"], r["d_model"], r["mfu"]) for r in rows} == {(32, 4096, 0.4), (32, 5120, 0.4), (40, 5120, 0.4)}
    reasons = {s.reason for s in skipped}
    assert "d_model (4096) must be divisible by n_heads (40), or set head_dim explicitly" in reasons
    assert "n_heads ('x') must be an integer" in reasons
    assert len(rows) + len(skipped) == 3 * 2
    # a run option's value is checked as every command checks it (sizing.validate), not skipped
    with pytest.raises(SizingError, match=r"mfu \(2\) must be in \(0, 1\], at least 1e-06"):
        sweep_rows("llama2-7b", {"n_heads": [32], "mfu": [0.4, 2]})
    _, past = sweep_rows("gpt2", {"seq_len": [1024, 2048]})
    assert past[0].point == {"seq_len": 2048} and "max_positions" in past[0].reason


def test_unknown_field_is_an_error():
    with pytest.raises(SizingError, match="neither a config field"):
        sweep_rows("llama2-7b", {"n_layer": [1]})


def test_sweep_frame_has_flat_columns_and_the_skipped_points():
    pytest.importorskip("pandas")
    from sizing import sweep

    frame = sweep("llama2-7b", n_layers="16:48:16", n_heads=[32, 48], memory=True)
    assert list(frame.columns) == ["n_layers", "n_heads", *HEADLINE_COLUMNS, *MEMORY_COLUMNS]
    assert len(frame) == 3 and len(frame.attrs["skipped"]) == 3
    assert frame.attrs["skipped"][0]["reason"].startswith("d_model (4096) must be divisible by n_heads (48)")
    assert frame["params_total"].tolist() == [3_500_281_856, 6_738_415_616, 9_976_549_376]
    assert frame["training_flops"].iloc[1] == 92_169_830_400_000_000_000_000  # exact past int64
    # 3.5B: 16 bytes per parameter (56 GB) and activations fit an A100 80GB; 6.7B does not
    assert frame["training_fits"].tolist() == [True, False, False]
    small = estimate(dataclasses.replace(get_preset("llama2-7b").config, n_layers=16), seq_len=4096)
    assert frame["training_memory_bytes"].iloc[0] == small.memory.training.per_gpu_bytes
    assert frame["inference_memory_bytes"].iloc[0] == small.memory.inference.total_bytes


def test_cli_table_csv_json():
    args = ["sweep", "-p", "llama2-7b", "--set", "n_layers=24,32,48", "--set", "d_model=4096,5120"]
    text = run(*args, "--tokens", "1T,2T", "--gpu", "h100,b200")
    assert text.exit_code == 0 and "24 of 24 points" in text.output, text.output
    out = run(*args, "--set", "n_heads=32,48", "--format", "csv")
    assert out.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    # 48 heads divide neither 4096 nor 5120: half the points are skipped
    assert len(rows) == 6 and rows[0]["n_layers"] == "24" and int(rows[2]["params_total"]) == 6_738_415_616
    assert "skipped 6 point(s)" in out.stderr
    data = json.loads(run(*args, "--set", "n_heads=32,48", "--format", "json").output)
    assert len(data["rows"]) == 6 and len(data["skipped"]) == 6 and data["skipped"][0]["point"]["n_heads"] == 48


def test_cli_refuses_repeats_and_bad_grids():
    base = ["sweep", "-p", "llama2-7b"]
    cases = {
        ("--gpu", "h100", "--gpu", "b200"): "--gpu given twice",
        ("--set", "n_layers=1", "--set", "n_layers=2"): "--set n_layers given twice",
        ("--tokens", "1T", "--set", "tokens=2T"): "tokens given both",
        ("--set", "n_layers"): "must look like FIELD=V1,V2",
        ("--set", "n_layers=1:2000", "--set", "d_model=1:2000:1"): "more than 1,000,000",
        ("--set", "depth=2"): "neither a config field",
        ("--sort", "speed"): "--sort ('speed') must be one of the columns",
    }
    for args, message in cases.items():
        out = run(*base, *args)
        assert out.exit_code == 2 and message in out.output and out.output.count("\n") == 1, (args, out.output)
    assert run("sweep", "--set", "n_layers=1").exit_code == 2
    assert run("sweep", "-p", "llama2-7b", "-p", "gpt2").exit_code == 2


def test_sweep_sorts():
    data = json.loads(
        run("sweep", "-p", "gpt2", "--set", "n_layers=12,1,6", "--sort", "params_total", "--format", "json").output
    )
    assert [r["n_layers"] for r in data["rows"]] == [1, 6, 12]


def test_pandas_stays_off_the_estimate_path():
    code = (
        "import sys; sys.argv = ['sizing', 'estimate', '-p', 'llama2-7b']\n"
        "from sizing.cli import main\n"
        "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "planning = ('sizing.plan.sweeps', 'sizing.plan.comparison', 'sizing.rows', "
        "'sizing.plan.compute_optimal', 'sizing.formulas.scaling')\n"
        "print([m for m in planning if m in sys.modules])\n"
        "import sizing.plan.sweeps, sizing.plan.comparison, sizing.rows, sizing.plan.compute_optimal\n"
        "print([m for m in ('pandas', 'numpy') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the planning modules stay off `sizing estimate`'s path, and importing them loads no pandas
    assert result.stdout.strip().splitlines()[-2:] == ["[]", "[]"]


def test_a_config_without_context_needs_seq_len(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps({"vocab_size": 1000, "d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "position": "rope"})
    )
    with pytest.raises(SizingError, match="seq_len must be given"):
        sweep_rows(str(path), {"n_layers": [1, 2]})
    rows, _ = sweep_rows(str(path), {"n_layers": [1, 2], "seq_len": "128"})
    from sizing.inputs.hf.config_file import load_config_file

    base = load_config_file(str(path))
    expected = [estimate(dataclasses.replace(base, n_layers=n), seq_len=128, memory=False) for n in (1, 2)]
    assert [r["params_total"] for r in rows] == [e.params.total for e in expected]
    assert [r["forward_flops_per_token"] for r in rows] == [e.to_row()["forward_flops_per_token"] for e in expected]
    out = run("sweep", "--config", path, "--set", "n_layers=1,2")
    assert out.exit_code == 2 and "seq_len must be given" in out.output


def test_a_grid_value_stays_in_its_row_when_nothing_is_costed():
    rows, _ = sweep_rows("gpt2", {"mfu": [0.3, 0.5], "price_per_gpu_hour": "2"})  # gpt2: no published tokens
    assert [(r["mfu"], r["price_per_gpu_hour"], r["gpu_hours"]) for r in rows] == [(0.3, 2.0, None), (0.5, 2.0, None)]


def test_a_point_is_built_as_modelconfig_builds_it():
    """sweeps._config (the dataclass __init__ left out, __post_init__ kept) gives the config
    ModelConfig(**fields) gives, and refuses what it refuses, with the same message."""
    from sizing.inputs import PRESETS, ModelConfig
    from sizing.plan.sweeps import _config

    for preset in PRESETS.values():
        fields = {f.name: getattr(preset.config, f.name) for f in dataclasses.fields(ModelConfig)}
        built = _config(fields)
        assert built == preset.config and hash(built) == hash(preset.config) and built.to_dict() == fields
    llama = PRESETS["llama2-7b"].config  # not MLA: there d_model must divide into n_heads
    bad = {**{f.name: getattr(llama, f.name) for f in dataclasses.fields(ModelConfig)}, "n_heads": 7}
    with pytest.raises(SizingError) as direct:
        ModelConfig(**bad)
    with pytest.raises(SizingError) as fast:
        _config(bad)
    assert str(fast.value) == str(direct.value)
