"""Hub ids as --config (sizing.inputs.hf.hub): read from a Hugging Face cache the test builds itself, with
HF_HUB_OFFLINE=1, so no network is used; missing ids fail with one line."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.hf.config_file import read_config_file
from sizing.inputs.hf.hub import looks_like_hub_id

FIX = Path(__file__).resolve().parent / "fixtures" / "hf_configs"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _cache(root: Path, repo: str, config: Path, extra: dict | None = None) -> Path:
    """The layout huggingface_hub keeps: models--owner--name/{refs/main, snapshots/<commit>/...}."""
    folder = root / ("models--" + repo.replace("/", "--"))
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(COMMIT)
    snapshot = folder / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    shutil.copy(config, snapshot / "config.json")
    for name, text in (extra or {}).items():
        (snapshot / name).write_text(text)
    return root


@pytest.fixture
def offline_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "hub"


def test_a_hub_id_reads_config_json_from_the_cache(offline_cache):
    _cache(offline_cache, "meta-llama/Llama-3.1-8B", FIX / "meta-llama__Llama-3.1-8B.json")
    out = CliRunner().invoke(
        main, ["estimate", "--config", "meta-llama/Llama-3.1-8B", "--format", "json", "--no-memory"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    # Llama 3.1 8B: 8,030,261,248 parameters (HF model card "8B"; tests/fixtures/hf_counts.json)
    assert data["params"]["total"] == 8_030_261_248
    assert data["flops"]["seq_len"] == 8192  # rope_scaling.original_max_position_embeddings


def test_a_hub_id_never_runs_code_from_the_repository(offline_cache):
    config = json.loads((FIX / "meta-llama__Llama-3.1-8B.json").read_text())
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_evil.Model"}
    path = offline_cache.parent / "evil.json"
    path.write_text(json.dumps(config))
    _cache(offline_cache, "someone/evil", path, {"modeling_evil.py": "raise SystemExit('code ran')\n"})
    assert read_config_file("someone/evil").config.n_layers == 32


def test_a_missing_id_offline_is_one_clear_line(offline_cache):
    out = CliRunner().invoke(main, ["estimate", "--config", "no-one/no-model"])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: hub id 'no-one/no-model'")
    assert "not in the local cache" in lines[0] and "HF_HUB_OFFLINE is set" in lines[0]


def test_what_counts_as_a_hub_id(tmp_path):
    assert looks_like_hub_id("meta-llama/Llama-3.1-8B") and looks_like_hub_id("gpt2/x@main")
    assert not looks_like_hub_id("no/such/config.json") and not looks_like_hub_id("dir/config.json")
    assert not looks_like_hub_id(str(tmp_path))  # an existing path is the path


def test_a_cached_id_needs_no_network_even_online(offline_cache, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there: any request fails
    _cache(offline_cache, "meta-llama/Llama-3.1-8B", FIX / "meta-llama__Llama-3.1-8B.json")
    assert read_config_file("meta-llama/Llama-3.1-8B").served_context == 131072


def test_a_download_says_so_at_once_and_waits_seconds_not_minutes(offline_cache, monkeypatch, capsys):
    """Issue 40: a hub id that needs the network says so on stderr before any wait, names
    HF_HUB_OFFLINE=1, and asks huggingface_hub for a timeout of a few seconds."""
    import huggingface_hub

    from sizing.inputs.hf import hub

    monkeypatch.delenv("HF_HUB_OFFLINE")
    calls = []

    def fake_download(repo, filename, local_files_only=False, etag_timeout=None, **kwargs):
        if local_files_only:
            raise OSError("not cached")
        calls.append(etag_timeout)
        assert "fetching config for owner/model; set HF_HUB_OFFLINE=1" in capsys.readouterr().err  # printed first
        raise OSError("unreachable")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    with pytest.raises(Exception, match="could not be fetched"):
        hub.hub_config_path("owner/model")
    assert calls == [hub.HUB_TIMEOUT_SECONDS] and hub.HUB_TIMEOUT_SECONDS <= 5


def test_a_download_draws_the_hubs_bar_only_when_the_command_layer_asks(tmp_path, monkeypatch):
    """Issue 35: a hub download shows huggingface_hub's own progress bar on a terminal (the CLI's
    `download_progress`), and stays quiet by default (piped output, JSON, the Python API)."""
    import huggingface_hub
    from huggingface_hub.utils import are_progress_bars_disabled

    from sizing.cli.progress import download_progress
    from sizing.inputs.hf.hub import SHOW_DOWNLOAD_PROGRESS, hub_config_path

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    bars = []  # were huggingface_hub's bars on during each download?

    def fake_download(repo, filename, local_files_only=False, **fetch):
        if local_files_only:
            raise huggingface_hub.errors.LocalEntryNotFoundError("not cached")
        bars.append(not are_progress_bars_disabled())
        # a real download lands in the cache's snapshots (hub_config_path refuses a path outside it)
        snapshot = tmp_path / "hub" / "models--meta-llama--Llama-3.1-8B" / "snapshots" / "0" / "config.json"
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text((FIX / "meta-llama__Llama-3.1-8B.json").read_text())
        return str(snapshot)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    before = are_progress_bars_disabled()
    hub_config_path("meta-llama/Llama-3.1-8B")  # the API: quiet
    with download_progress("json"):  # JSON output: quiet
        hub_config_path("meta-llama/Llama-3.1-8B")
    token = SHOW_DOWNLOAD_PROGRESS.set(True)  # what download_progress sets on a terminal
    try:
        hub_config_path("meta-llama/Llama-3.1-8B")
    finally:
        SHOW_DOWNLOAD_PROGRESS.reset(token)
    assert bars == [False, False, not before] and are_progress_bars_disabled() == before  # restored
