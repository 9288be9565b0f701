"""`sizing parallel`: the README's question, a layout as given, formats and exit codes."""

import csv
import io
import json

from click.testing import CliRunner

from sizing.cli import main


def run(*args):
    return CliRunner().invoke(main, ["parallel", *args])


def test_will_llama2_70b_train_on_8_h100():
    """No full fine-tune layout fits in 8 x 80 GB; the answer lists what would."""
    result = run("--preset", "llama2-70b", "--gpu", "h100", "--gpus", "8", "--format", "json")
    assert result.exit_code == 3, result.output
    data = json.loads(result.output)
    assert data["fits"] is False and data["gpus_searched"] == [8]
    what = [w["what"] for w in data["would_fit"]]
    for needed in ("offloaded to CPU", "pure bf16", "8-bit Adam", "LoRA", "QLoRA", "16 GPUs"):
        assert any(needed in w for w in what), (needed, what)
    for alt in data["would_fit"]:
        assert alt["per_gpu_bytes"] <= 85_520_809_984  # an H100 reports 81,559 MiB
    table = run("--preset", "llama2-70b", "--gpu", "h100", "--gpus", "8")
    assert table.exit_code == 3 and "no layout on 8 x h100-sxm fits" in table.output and "would fit" in table.output


def test_search_finds_the_fewest_gpus():
    result = run("--preset", "llama2-7b", "--gpu", "h100", "--global-batch", "64", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fits"] and data["layout"]["world"] == 2  # 16 B/param x 6.7B = 108 GB: more than one GPU


def test_layout_as_given_with_every_section():
    args = ["--preset", "llama2-70b", "--gpu", "h100", "--tp", "8", "--pp", "4", "--dp", "2", "--sp"]
    result = run(*args, "-m", "8", "--recompute", "selective", "--tokens", "2T")
    assert result.exit_code == 0, result.output
    for text in ("per GPU (pipeline stage 0)", "Communication per GPU per step", "pipeline bubble", "GPU-hours"):
        assert text in result.output
    data = json.loads(run(*args, "-m", "8", "--format", "json").output)
    assert data["layout"]["world"] == 64 and data["most_loaded_stage"] == 0
    assert (
        sum(data["per_gpu"][k] for k in data["per_gpu"] if not k.startswith("cpu") and k != "total_bytes")
        == (data["per_gpu_bytes"])
    )
    dims = {c["dimension"] for c in data["collectives"]}
    assert dims == {"dp", "tp", "pp"}
    rows = list(csv.reader(io.StringIO(run(*args, "-m", "8", "--format", "csv").output)))
    assert rows[0] == ["key", "value"] and any(r[0] == "per_gpu_bytes" for r in rows)
    assert run(*args, "-m", "8", "--format", "markdown").output.startswith("## llama2-70b")


def test_does_not_fit_exits_3():
    result = run("--preset", "llama2-70b", "--gpu", "h100", "--dp", "8", "--zero", "3", "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.output)["fits"] is False


def test_qlora_on_one_gpu():
    result = run("--preset", "llama2-70b", "--gpu", "h100", "--dp", "1", "--finetune", "qlora", "--recompute", "full")
    assert result.exit_code == 0, result.output
    assert "frozen base weights" in result.output
