"""The data files (sizing/data/*.json) and a user's own GPUs and presets, end to end."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs import data_files, hardware, presets

MY_GPU = {
    "key": "my-gpu",
    "name": "My accelerator 96GB",
    "peak_tflops": {"bf16": 500},
    "memory_gib": 96,
    "bandwidth_tbs": 4.0,
    "source": "my vendor's datasheet",
}


@pytest.fixture(autouse=True)
def fresh_tables(monkeypatch, tmp_path):
    """Each test reads the tables anew, with no user folder unless it makes one."""
    monkeypatch.setenv("SIZING_DATA_DIR", str(tmp_path / "no-user-folder"))
    monkeypatch.setattr(data_files, "_extra_files", {kind: [] for kind in data_files.KINDS})
    hardware._tables.cache_clear()
    presets._tables.cache_clear()
    yield
    hardware._tables.cache_clear()
    presets._tables.cache_clear()


def run(*args: str):
    """One CLI run; --gpu-file lasts for its process, so each run here starts without one."""
    for files in data_files._extra_files.values():
        files.clear()
    return CliRunner().invoke(main, list(args))


def write(path, content) -> str:
    path.write_text(json.dumps(content))
    return str(path)


def test_builtin_tables_are_data_with_sources():
    gpus = data_files.builtin("gpus.json")["gpus"]
    rows = data_files.builtin("presets.json")["presets"]
    assert len(gpus) == len(hardware.GPUS) and len(rows) == len(presets.PRESETS)
    assert all(g["source"].strip() for g in gpus) and all(p["source"].strip() for p in rows)
    # a preset read back from its JSON entry is the same architecture
    assert (
        presets.get_preset("llama2-7b").config.d_ff == 11008
    )  # llama_ffn_dim(4096, 256) = 256 * ceil(2/3 * 4 * 4096 / 256)


def test_every_builtin_entry_builds():
    """The built-in tables build each entry on first use (a command that sizes one preset checks
    one config); here every one is built and checked, and each keeps the order of its file."""
    built = {name: presets.PRESETS[name] for name in presets.PRESETS}
    assert list(built) == [row["name"] for row in data_files.builtin("presets.json")["presets"]]
    assert all(p.name == name and p.config.n_layers > 0 for name, p in built.items())
    gpus = {key: hardware.GPUS[key] for key in hardware.GPUS}
    assert list(gpus) == [row["key"] for row in data_files.builtin("gpus.json")["gpus"]]
    assert all(g.key == key and g.memory_bytes > 0 for key, g in gpus.items())


def test_a_bad_builtin_entry_is_one_line_when_it_is_used():
    table = data_files.LazyRecords(hardware.GPU, None)
    table.add_row("bad", {"key": "bad", "nope": 1}, "gpus.json: gpu 'bad'")
    assert "bad" in table and list(table) == ["bad"]
    with pytest.raises(data_files.DataFileError, match=r"gpus\.json: gpu 'bad': unknown field"):
        table["bad"]


def test_user_gpu_file_end_to_end(tmp_path):
    path = write(tmp_path / "gpus.json", {"gpus": [MY_GPU]})
    result = run(
        "--gpu-file", path, "estimate", "--preset", "llama2-7b", "--gpu", "my-gpu", "--tokens", "2T", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    training = json.loads(result.output)["training"]
    # 6N GPU-hours at the default MFU: 6 * 6,738,415,616 * 2e12 / (500e12 * mfu) / 3600
    mfu = training["mfu"]
    assert training["gpu_hours_6n"] == pytest.approx(6 * 6_738_415_616 * 2e12 / (500e12 * mfu) / 3600)


def test_user_folder_is_read_by_every_command(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    write(folder / "gpus.json", {"gpus": [MY_GPU]})
    monkeypatch.setenv("SIZING_DATA_DIR", str(folder))
    assert hardware.get_gpu("my-gpu").memory_bytes == 96 * 2**30
    assert run("gpus").output.count("My accelerator 96GB") == 1


def test_user_preset_file(tmp_path):
    entry = {
        "name": "my-model",
        "family": "llama",
        "source": "my own",
        "context": 2048,
        "config": {
            "vocab_size": 32000,
            "d_model": 512,
            "n_layers": 4,
            "n_heads": 8,
            "d_ff": 1376,
            "mlp": "swiglu",
            "norm": "rmsnorm",
            "position": "rope",
        },
    }
    path = write(tmp_path / "p.json", {"presets": [entry]})
    result = run("--presets-file", path, "estimate", "--preset", "my-model", "--format", "json")
    assert result.exit_code == 0, result.output
    # 32000*512 (embedding) + 4 * (4*512*512 + 3*512*1376 + 2*512) + 512 + 512*32000 (untied head)
    assert (
        json.loads(result.output)["params"]["total"]
        == 32000 * 512 * 2 + 4 * (4 * 512 * 512 + 3 * 512 * 1376 + 2 * 512) + 512
    )


@pytest.mark.parametrize(
    "change, field",
    [
        ({"memory_gib": -1}, "memory_gib (-1)"),
        ({"peak_tflops": {"bf16": "fast"}}, "peak_tflops"),
        ({"peak_tflops": {"bf17": 1}}, "peak_tflops dtype ('bf17')"),
        ({"bandwidth_tbs": None}, "bandwidth_tbs is required"),
        ({"colour": "green"}, "unknown field(s) 'colour'"),
        ({"key": "h100-sxm"}, "'h100-sxm' is already defined"),
    ],
)
def test_malformed_gpu_file_is_one_line_naming_the_field(tmp_path, change, field):
    path = write(tmp_path / "gpus.json", {"gpus": [{**MY_GPU, **change}]})
    result = run("--gpu-file", path, "estimate", "--preset", "gpt2", "--gpu", "my-gpu")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: gpus.json: gpu") and field in lines[0], result.output


def test_not_json_and_wrong_shape(tmp_path):
    bad = tmp_path / "gpus.json"
    bad.write_text("{not json")
    result = run("--gpu-file", str(bad), "gpus")
    assert result.exit_code == 2 and "gpus.json: not valid JSON" in result.output
    result = run("--gpu-file", write(tmp_path / "g2.json", [MY_GPU]), "gpus")
    assert result.exit_code == 2 and '"gpus": a list of objects' in result.output
