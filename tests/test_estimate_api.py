"""The papercuts of `estimate()` and `sizing estimate --config`: a config file path, quantities
typed as the CLI takes them, T defaulting to the file's max_position_embeddings and saying so,
and to_dict() being the CLI's JSON (memory included)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing import estimate
from sizing.cli import main
from sizing.inputs.hf.config_file import read_config_file
from sizing.validate import SizingError

HF = Path(__file__).resolve().parent / "fixtures" / "hf_configs"
LLAMA2 = HF / "meta-llama__Llama-2-7b-hf.json"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_estimate_takes_a_config_path_and_defaults_T_to_max_position_embeddings():
    est = estimate(str(LLAMA2), tokens="2T")
    assert est.params.total == 6_738_415_616
    assert est.flops.seq_len == 4096 and est.seq_len_source == f"max_position_embeddings in {LLAMA2}"
    assert est.training.run.tokens == 2 * 10**12
    assert estimate(LLAMA2, seq_len="2048", memory=False).flops.seq_len == 2048  # a Path too


def test_estimate_parses_quantities_exactly_and_refuses_bad_ones():
    assert estimate("llama2-7b", tokens="1.4e12", memory=False).training.run.tokens == 1_400_000_000_000
    with pytest.raises(SizingError, match="tokens"):
        estimate("llama2-7b", tokens="2X")
    with pytest.raises(SizingError, match="seq_len"):
        estimate("llama2-7b", seq_len="1.5")
    with pytest.raises(SizingError, match="not-a-model"):
        estimate("not-a-model")
    with pytest.raises(SizingError, match="not found"):
        estimate("no/such/config.json")


def test_config_file_context_fields():
    assert read_config_file(HF / "openai-community__gpt2.json").context_field == "n_positions"
    # Qwen2-7B states max_position_embeddings 131,072 and no pretraining field: trained at the default 4,096
    qwen = read_config_file(HF / "Qwen__Qwen2-7B.json")
    assert (qwen.context, qwen.served_context) == (4096, 131072)


def test_to_dict_is_the_cli_json():
    api = estimate("llama2-7b", gpu="h100").to_dict()
    cli = json.loads(run("estimate", "--preset", "llama2-7b", "--gpu", "h100", "--format", "json").output)
    assert api["memory"] == cli["memory"] and api["params"] == cli["params"] and api["training"] == cli["training"]
    assert api["flops"]["seq_len_source"] == cli["flops"]["seq_len_source"] == "llama2-7b's training context"
    assert "memory" not in estimate("llama2-7b", memory=False).to_dict()


def test_cli_config_without_seq_len_uses_the_file_and_says_so():
    result = run("estimate", "--config", LLAMA2, "--no-memory")
    assert result.exit_code == 0, result.output
    assert f"T = 4096 (max_position_embeddings in {LLAMA2})" in result.output
    data = json.loads(run("estimate", "--config", LLAMA2, "--format", "json", "--no-memory").output)
    assert data["flops"]["seq_len"] == 4096 and data["flops"]["seq_len_source"].startswith("max_position_embeddings")
    given = json.loads(run("estimate", "--config", LLAMA2, "-T", "1024", "--format", "json", "--no-memory").output)
    assert given["flops"]["seq_len"] == 1024 and given["flops"]["seq_len_source"] == "--seq-len"


def test_cli_config_that_states_no_context_asks_for_seq_len(tmp_path):
    cfg = {"vocab_size": 1000, "d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "position": "rope"}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(cfg))
    result = CliRunner().invoke(main, ["estimate", "--config", str(path)])
    assert result.exit_code == 2 and "--seq-len is needed" in result.output
    assert run("estimate", "--config", path, "-T", "128").exit_code == 0


def test_docs_config_python_snippet_runs_with_a_real_config():
    """docs/config.md's load_config_file / estimate(path) snippet, on the fixture config."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()
    snippet = text.split("```python\n", 1)[1].split("```", 1)[0].replace("Llama-2-7b-hf/config.json", str(LLAMA2))
    namespace: dict = {}
    exec(compile(snippet, "docs/config.md", "exec"), namespace)
    assert namespace["est"].seq_len_source == f"max_position_embeddings in {LLAMA2}"
    assert namespace["cfg"] == namespace["est"].config and namespace["est"].training.run.tokens == 2 * 10**12
    assert "4096: the context" in snippet and read_config_file(LLAMA2).context == 4096
