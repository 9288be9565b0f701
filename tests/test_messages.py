"""One-line errors that say what was typed and what to do (issue 23's messages)."""

import json

from click.testing import CliRunner

from sizing.cli import main
from sizing.cli.common import MAX_ERROR_CHARS, UserError

RUNNER_KW = {} if "mix_stderr" not in CliRunner.__init__.__code__.co_varnames else {"mix_stderr": False}


def error(*args) -> str:
    result = CliRunner(**RUNNER_KW).invoke(main, list(args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_the_value_is_echoed_as_typed():
    assert error("estimate", "-p", "gpt2", "--gpu", "H100X").startswith("Error: unknown gpu 'H100X'; did you mean h100")
    assert error("estimate", "-p", "gpt2", "--tokens", "0T") == "Error: --tokens (0T) must be positive"


def test_a_mistyped_command_or_option_is_one_line_with_a_close_match():
    assert error("servee") == "Error: no command servee; did you mean serve?"
    assert "commands: calibrate, compare, estimate" in error("zzz")
    close = "(Did you mean one of: '--power', '--price', '--pue'?)"
    assert error("estimate", "--nope") == f"Error: No such option '--nope'. {close}"


def test_an_hf_config_without_model_type_is_named_so(tmp_path):
    path = tmp_path / "config.json"
    hf = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "vocab_size": 32000}
    path.write_text(json.dumps(hf))  # vocab_size is also this tool's field: still an HF config
    line = error("estimate", "--config", str(path))
    assert "looks like a Hugging Face config but has no 'model_type'" in line and "unknown" not in line


def test_unknown_fields_get_a_close_match_not_the_whole_list():
    line = error("estimate", "-p", "gpt2", "--set", "n_layer=3")
    assert line == (
        "Error: unknown config field 'n_layer'; did you mean n_layers? the fields are listed in docs/config.md"
    )


def test_sweep_takes_a_range_of_quantities():
    result = CliRunner(**RUNNER_KW).invoke(main, ["sweep", "-p", "gpt2", "--tokens", "1T:3T:1T", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert [row["tokens"] for row in json.loads(result.stdout)["rows"]] == [10**12, 2 * 10**12, 3 * 10**12]


def test_errors_are_cut_to_one_screen_line():
    assert len(UserError("x" * 1000).format_message()) == MAX_ERROR_CHARS
    assert UserError("short").format_message() == "short"
    assert len(error("estimate", "-p", "gpt2", "--gpu", "y" * 500)) <= len("Error: ") + MAX_ERROR_CHARS
