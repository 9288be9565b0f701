"""Every command that takes --mfu, --price or --batch refuses the same bad values with one
`Error:` line and exit 2 (issue 21, issue 23). The commands are enumerated from the click
group at run time, so a command added later is covered without editing this test."""

import click
import pytest
from click.testing import CliRunner

from sizing import estimate
from sizing.cli import main
from sizing.validate import MIN_MFU, SizingError

# option -> values every command must refuse, and the words the one line must hold
BAD = {
    "--mfu": [("1e-300", "at least 1e-06"), ("0", "at least 1e-06"), ("1.5", "in (0, 1]"), ("nan", "mfu")],
    "--price": [("-1", ">= 0 USD per GPU-hour"), ("inf", "price")],
    "--batch": [("0", "positive integer"), ("-3", "positive integer"), ("1.5", "integer")],
}


def _commands_with(option: str) -> list[str]:
    ctx = click.Context(main)
    names = []
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        if any(option in getattr(param, "opts", ()) for param in command.params):
            names.append(name)
    return names


def _model_args(name: str) -> list[str]:
    """A valid model for commands that need one, so the option itself is what is judged."""
    ctx = click.Context(main)
    opts = {o for p in main.get_command(ctx, name).params for o in getattr(p, "opts", ())}
    return ["--preset", "gpt2"] if "--preset" in opts else []


def test_the_shared_options_are_found_on_the_commands_that_take_them():
    # a floor, not the exact list: other commands may add these options
    assert {"estimate", "compare", "parallel", "plan", "sweep"} <= set(_commands_with("--mfu"))
    assert {"estimate", "serve", "sweep"} <= set(_commands_with("--price"))
    assert {"memory", "serve"} <= set(_commands_with("--batch"))


@pytest.mark.parametrize("option", sorted(BAD))
def test_every_command_refuses_the_same_bad_values(option):
    runner = CliRunner()
    for name in _commands_with(option):
        for value, words in BAD[option]:
            result = runner.invoke(main, [name, *_model_args(name), option, value])
            assert result.exit_code == 2, (name, option, value, result.output)
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("Error: "), (name, option, value, result.output)
            assert words in lines[0], (name, option, value, lines[0])


def test_the_api_refuses_what_the_cli_refuses():
    with pytest.raises(SizingError, match=r"mfu \(5e-324\) must be in \(0, 1\], at least 1e-06"):
        estimate("gpt2", tokens=10**12, mfu=5e-324)
    with pytest.raises(SizingError, match="price_per_gpu_hour"):
        estimate("gpt2", tokens=10**12, price_per_gpu_hour=-1)
    # the smallest MFU accepted keeps the largest run finite: 1e30 tokens of gpt2 at MIN_MFU
    hours = estimate("gpt2", tokens=10**30, mfu=MIN_MFU, memory=False).training.gpu_hours
    assert hours < float("inf")


def test_a_peak_too_small_for_a_finite_mfu_is_refused_by_the_cli_and_the_api():
    import subprocess
    import sys

    from sizing.inputs.profile_settings import ProfileSettings

    with pytest.raises(SizingError, match=r"peak_tflops \(1e-320\) must be a peak in TFLOP/s between 0.001 and 1e\+30"):
        ProfileSettings(seq_len=64, device="cpu", peak_tflops=1e-320)
    assert ProfileSettings(seq_len=64, device="cpu", peak_tflops=1e-3).peak_tflops == 1e-3
    code = (
        "import sys; from click.testing import CliRunner; from sizing.cli import main; "
        "r = CliRunner().invoke(main, ['profile', '--device', 'cpu', '--preset', 'gpt2', '--peak-tflops', '1e-320', "
        "'--format', 'json']); print(r.exit_code, 'torch' in sys.modules); print(r.output)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.startswith("2 False\nError: --peak-tflops (1e-320) must be a peak in TFLOP/s between 0.001"), out
