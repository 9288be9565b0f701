"""docs/ stays true: the generated CLI reference is fresh, links resolve, and the numbers, keys
and field names the pages state are the ones the code computes."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import shlex
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing import ModelConfig, estimate, get_preset
from sizing.cli import main
from sizing.inputs.hf.read import SUPPORTED_MODEL_TYPES
from sizing.inputs.presets import PRESETS

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
# verify, report and profile are tested in their own files
LIGHT = ("estimate", "presets", "gpus", "memory", "serve", "speculate", "serve-layout")


def load_script(path: Path):
    """A script of tools/ or benchmarks/ (folders that are not packages), imported by path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cli_reference = load_script(REPO / "tools" / "cli_reference.py")


def read(name: str) -> str:
    return (DOCS / name).read_text()


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def numbers(text: str) -> Counter:
    """Every number written in `text` (1,342,177,280 / 12.55 / -46.56), as written."""
    return Counter(re.findall(r"-?\d[\d,]*(?:\.\d+)?", text))


# --- the generated CLI reference ---


def test_cli_reference_is_fresh():
    assert cli_reference.CLI_MD.read_text() == cli_reference.cli_reference_markdown(), (
        "docs/cli.md is stale: run `python tools/cli_reference.py`"
    )
    assert cli_reference.main(["--check"]) == 0


def test_reference_lists_every_command():
    text = cli_reference.cli_reference_markdown()
    for name in main.list_commands(None):
        assert f"## `sizing {name}`" in text


def test_cli_reference_writes_atomically_and_check_reports_stale(tmp_path, monkeypatch, capsys):
    target = tmp_path / "cli.md"
    monkeypatch.setattr(cli_reference, "CLI_MD", target)
    assert cli_reference.main(["--check"]) == 1  # missing counts as stale; --check writes nothing
    assert not target.exists()
    assert "stale" in capsys.readouterr().err
    assert cli_reference.main([]) == 0
    assert target.read_text() == cli_reference.cli_reference_markdown()
    assert [p.name for p in tmp_path.iterdir()] == ["cli.md"]  # no temporary file left beside it
    assert cli_reference.main(["--check"]) == 0


# --- links ---


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(
        r"^#+ (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL), flags=re.MULTILINE
    )
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_links_resolve(page):
    text = page.read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.name}: broken link {target}"
        if anchor and file.suffix == ".md":
            assert anchor in heading_anchors(file.read_text()), f"{page.name}: no heading for {target}"


def test_architecture_names_real_paths():
    """docs/architecture.md's first column: `sizing/data/`, `sizing/estimate.py`, `rows.py` (beside
    the first), `sizing/hybrid/` (from the repository root)."""
    for cell in re.findall(r"^\| (`.+?`) \|", read("architecture.md"), flags=re.MULTILINE):
        names = re.findall(r"`([^`]+)`", cell)
        folder = (REPO / names[0]).parent if not names[0].endswith("/") else REPO / names[0]
        for name in names:
            path = REPO / name if "/" in name else folder / name
            assert path.exists(), f"docs/architecture.md names {name}, which is not at {path}"


# --- one place for the conventions ---


def test_conventions_table_is_written_once():
    holders = [p.name for p in PAGES if "| quantity | convention |" in p.read_text()]
    assert holders == ["conventions.md"]


def test_worked_example_is_what_the_code_computes():
    """docs/conventions.md's Llama-2-7B example at T = 4096, recomputed from the JSON contract."""
    cfg = get_preset("llama2-7b").config
    L, d, f, V, T = cfg.n_layers, cfg.d_model, cfg.d_ff, cfg.vocab_size, 4096
    full = estimate("llama2-7b", seq_len=T).to_dict()["flops"]
    causal = estimate("llama2-7b", seq_len=T, attention="causal").to_dict()["flops"]

    def attention(flops):
        return flops["components"]["attn.scores"] + flops["components"]["attn.av"]

    weights = 2 * (L * (4 * d * d + 3 * d * f) + d * V)  # the token lookup is free, the lm_head is not
    assert full["forward_per_token"] - attention(full) == weights == 13_214_154_752
    assert attention(full) == 2 * 2 * L * d * T == 2_147_483_648
    assert attention(causal) == 2 * 2 * L * d * (T + 1) // 2 == 1_074_003_968
    assert full["forward_per_token"] == 15_361_638_400 and causal["forward_per_token"] == 14_288_158_720
    assert full["training_per_token"] == 3 * full["forward_per_token"] == 46_084_915_200
    six_n = full["kaplan_6n_per_token"]
    assert six_n == 40_430_493_696
    assert round(100 * (1 - six_n / full["training_per_token"]), 1) == 12.3
    assert round(100 * (1 - six_n / causal["training_per_token"]), 1) == 5.7
    text = read("conventions.md")
    for figure in (weights, 2_147_483_648, 1_074_003_968, 15_361_638_400, 14_288_158_720, 46_084_915_200, six_n):
        assert f"{figure:,}" in text


# --- the JSON contract ---


def documented_json_keys() -> list[str]:
    keys = []
    for row in re.findall(r"^\| (`.*?) \|", read("json.md"), flags=re.MULTILINE):
        for cell in re.findall(r"`([^`]+)`", row):
            prefix, brace, rest = cell.partition("{")  # `a.{b, c}_d` is a.b_d and a.c_d
            names, _, suffix = rest.partition("}")
            names = names.split(",") if brace else [""]
            keys += [prefix + name.strip() + suffix for name in names if name.strip() != "..."]
    return keys


def test_json_contract_keys_exist():
    """Every key docs/json.md lists is in `sizing estimate --format json`."""
    result = CliRunner().invoke(main, ["estimate", "--preset", "llama2-7b", "--format", "json"])
    data = json.loads(result.output)
    keys = documented_json_keys()
    assert len(keys) > 40
    for key in keys:
        node = data
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"docs/json.md lists {key}, to_dict() lacks it"
            node = node[part]
    assert {key.split(".")[0] for key in keys} == set(data)  # and every top-level key is documented


# --- the config page ---


def test_glossary_lists_every_config_field():
    rows = re.findall(r"^\| `(\w+)` \|", read("config.md"), flags=re.MULTILINE)
    assert sorted(rows) == sorted(f.name for f in dataclasses.fields(ModelConfig))  # each once


def test_config_page_names_the_supported_model_types_and_counted_configs():
    text = read("config.md")
    listed = re.search(r"\*\*Supported `model_type`s:\*\*(.*?)\. ", text, flags=re.DOTALL).group(1)
    assert re.findall(r"`(\w+)`", listed) == list(SUPPORTED_MODEL_TYPES)
    counted = json.loads((REPO / "tests" / "fixtures" / "hf_counts.json").read_text())
    stated = int(re.search(r"For (\d+) real configs", text).group(1))
    assert stated == len([k for k in counted if not k.startswith("_")])


# --- console examples: every light `$ sizing ...` with output shown runs, with the same numbers ---


def console_examples() -> list[tuple[str, str, str, int | None]]:
    """(page, command, shown output, shown exit code) for each `$ sizing <light command>` that
    has output or an `echo $?` after it."""
    found = []
    for page in DOCS.glob("*.md"):
        for block in code_blocks(page.read_text(), "console"):
            chunks = re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]
            for i, chunk in enumerate(chunks):
                command, _, shown = chunk.partition("\n")
                if not command.startswith("sizing ") or command.split()[1] not in LIGHT:
                    continue
                follow = chunks[i + 1] if i + 1 < len(chunks) else ""
                code = int(follow.split("\n")[1]) if follow.startswith("echo $?") else None
                if shown.strip() or code is not None:
                    found.append((page.name, command, shown, code))
    return found


@pytest.mark.parametrize(
    "page,command,shown,code",
    [
        pytest.param(*example, id=f"{example[0]}: {example[1].split('  #')[0].strip()}")
        for example in console_examples()
    ],
)
def test_console_example(page, command, shown, code):
    command, _, jq = command.partition(" | jq ")
    args = shlex.split(command.split("  #", 1)[0])[1:]
    result = CliRunner().invoke(main, args)
    if code is not None:
        assert result.exit_code == code, result.output
    if jq:  # `jq '{a, b}'`: those keys of the JSON, equal to the JSON shown
        wanted = [k.strip() for k in shlex.split(jq)[0].strip("{}").split(",")]
        assert {k: json.loads(result.output)[k] for k in wanted} == json.loads(shown)
        return
    # the numbers shown (up to a "..." line that stands for the rest) are all in the real output
    shown = shown.split("\n...", 1)[0]
    missing = numbers(shown) - numbers(result.output)
    assert not missing, f"{page}: `{command}` no longer prints {sorted(missing)}"


def test_verify_sample_matches_the_formulas():
    """docs/verification.md's sample table: formula and counted columns are the parameter counts."""
    block = code_blocks(read("verification.md"), "text")[0]
    name = block.split(":", 1)[0]
    components = estimate(name).to_dict()["params"]["components"]
    rows = re.findall(r"^(\S+)\s+([\d,]+)\s+([\d,]+)\s+0\b", block, flags=re.MULTILINE)
    assert len(rows) == len(components) + 1  # every component and the total
    for component, formula, counted in rows:
        expected = sum(components.values()) if component == "total" else components[component]
        assert int(formula.replace(",", "")) == int(counted.replace(",", "")) == expected


def test_verification_counts_are_the_presets():
    presets = len(PRESETS)
    text = " ".join(read("verification.md").split())
    assert f"checks all {presets} presets" in text
    assert f"runs all {3 * presets} checks (params, FLOPs, memory)" in text


# --- benchmarks/README.md documents only what startup.py does ---


def test_benchmark_readme_commands_parse():
    parser = load_script(REPO / "benchmarks" / "startup.py").build_parser()
    text = (REPO / "benchmarks" / "README.md").read_text()
    commands = re.findall(r"python benchmarks/startup\.py([^`\n#]*)", text)
    assert any("--record" in c for c in commands), "benchmarks/README.md should say how to record"
    for command in commands:
        parser.parse_args(shlex.split(command))  # exits 2 (fails the test) on an unknown flag
