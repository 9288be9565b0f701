"""What keeps `sizing estimate` and `sizing --help` fast (issue 22; figures in benchmarks/): the
help lists commands without importing them, the version comes from the package, tabulate is
imported without importlib.metadata or wcwidth, and estimate() computes its parts on access."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import sizing
from sizing import estimate
from sizing.cli import LazyGroup, main
from sizing.memory import summary_for_estimate
from sizing.validate import SizingError

ROOT = Path(__file__).resolve().parents[1]


def _in_fresh_process(code: str) -> list:
    """Run `code` in a new interpreter (so nothing this test process imported counts); it prints
    one list literal, returned here."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def _modules_after(args: list[str]) -> list:
    return _in_fresh_process(
        f"import sys; sys.argv = ['sizing', *{args!r}]\n"
        "from sizing.cli import main\n"
        "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('sizing.cli.') or m in "
        "('importlib.metadata', 'wcwidth', 'tabulate', 'sizing.memory')))"
    )


def test_the_stored_short_help_is_each_commands_own():
    for name, (module, attribute) in LazyGroup.lazy_commands.items():
        command = getattr(__import__(f"sizing.cli.{module}", fromlist=[attribute]), attribute)
        assert LazyGroup.command_help[name] == command.get_short_help_str(limit=10_000), name


def test_help_lists_every_command_as_click_would_without_importing_one():
    assert _modules_after(["--help"]) == ["sizing.cli.common", "sizing.cli.repeats"]
    ours = CliRunner().invoke(main, ["--help"]).output

    class ClickListing(LazyGroup):
        format_commands = click.Group.format_commands  # click's own: loads every command

    clicks = ClickListing(name=main.name, help=main.help, params=main.params, context_settings=main.context_settings)
    assert CliRunner().invoke(clicks, ["--help"]).output == ours
    assert set(clicks.commands) == set(LazyGroup.lazy_commands)
    assert re.search(r"^  estimate +Parameters by component", ours, re.M)


def test_estimate_path_imports_neither_importlib_metadata_nor_wcwidth():
    loaded = _modules_after(["estimate", "--preset", "llama2-7b"])
    assert "tabulate" in loaded and "sizing.memory" in loaded  # the table and its memory summary
    assert "importlib.metadata" not in loaded and "wcwidth" not in loaded
    assert "sizing.cli.verify" not in loaded and "sizing.cli.report" not in loaded


def test_a_stack_preset_skips_the_whole_model_readers():
    """A stack preset never reaches sizing.whole (its hybrid and vision readers cost ~40 ms to import),
    nor the --from readers: the shortcut in sizing.cli.any_model holds because no name is both."""
    loaded = _in_fresh_process(
        "import sys; sys.argv = ['sizing', 'estimate', '--preset', 'llama2-7b']\n"
        "from sizing.cli import main\n"
        "try:\n    main(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['sizing', 'whole'], ['sizing', 'hybrid'], "
        "['sizing', 'vision']) or m == 'sizing.frameworks.detect'))"
    )
    assert loaded == []
    from sizing.hybrid import HYBRID_PRESETS
    from sizing.inputs import get_preset
    from sizing.vision import VISION_PRESETS

    for whole in (*HYBRID_PRESETS, *VISION_PRESETS):
        with pytest.raises(KeyError):
            get_preset(whole.name)


def test_tabulate_keeps_its_real_version_and_metadata_still_imports_afterwards():
    version, real, metadata_version = _in_fresh_process(
        "from sizing.render.tables import import_tabulate\n"
        "t = import_tabulate()\n"
        "import importlib.metadata as m\n"
        "print([t.__version__, m.version('tabulate'), m.__file__ is not None])"
    )
    assert version == real and re.fullmatch(r"\d+\.\d+(\.\d+)?.*", version) and metadata_version


def test_version_comes_from_the_package():
    assert CliRunner().invoke(main, ["--version"]).output == f"main, version {sizing.__version__}\n"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'version = {attr = "sizing.__version__"}' in pyproject and 'dynamic = ["version"]' in pyproject


def test_estimate_computes_its_parts_on_access_and_caches_them():
    est = estimate("llama2-7b", tokens="2T")
    assert not {"params", "flops", "training", "memory"} & set(vars(est))  # nothing computed yet
    assert est.params.total == 6_738_415_616  # Llama-2-7B (arXiv:2307.09288, HF config)
    assert est.memory == summary_for_estimate(est.config, 4096, "a100")  # the default GPU (vocabulary)
    assert est.memory is est.memory  # computed once
    assert est.training.flops_6n == 6 * 6_738_415_616 * 2 * 10**12  # 6 N D (no lookup-table rows removed: active)
    assert estimate("llama2-7b", memory=False).memory is None


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"attention": "sliding"}, "attention"), ({"recompute": "some"}, "recompute")]
)
def test_bad_input_is_refused_by_the_call_not_on_access(kwargs, field):
    with pytest.raises(SizingError, match=field):
        estimate("llama2-7b", **kwargs)
