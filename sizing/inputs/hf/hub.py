"""Hugging Face hub ids as config sources: `--config meta-llama/Llama-3.1-8B` reads that
repository's config.json through `huggingface_hub` (imported only on this path).

Only config.json is fetched (`hf_hub_download`, one file, never a snapshot), and it is read as
JSON by sizing.inputs.hf.config_file like any other path: no model code is downloaded or run, whatever
`auto_map` the config names. The local cache is read first (a cached config.json needs no
network); with HF_HUB_OFFLINE set, it is the only place looked in. The cache is the one the
Hugging Face tools share (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub), read
from the environment at call time.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from sizing.inputs.config import ConfigError
from sizing.validate import show

# owner/name as the hub spells repository ids (letters, digits, '-', '_', '.'), optionally
# @revision; a string that exists as a path is always the path.
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*(@[A-Za-z0-9_./-]+)?$")
_TRUE = {"1", "ON", "YES", "TRUE"}
HUB_TIMEOUT_SECONDS = 5  # a config.json is a few kB: an unreachable hub fails within seconds, not minutes

# The hub's own rules for each part of owner/name (huggingface_hub's validate_repo_id): 1 to 96
# letters, digits, '-', '_', '.', starting and ending with a letter or digit, no '--' or '..',
# not ending in '.git'. Checked here so a bad id is one line, not the client's exception.
_HUB_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?")
_REVISION = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")


# Whether huggingface_hub may draw its own download bar (tqdm, on stderr). Off unless the command
# layer turns it on (sizing.cli.progress.download_progress: stderr a terminal, output not JSON),
# so piped output, JSON and the Python API stay quiet. This module prints one line itself: before
# a download, that it fetches and how to stay offline (stderr; issue 40).
SHOW_DOWNLOAD_PROGRESS: ContextVar[bool] = ContextVar("show_download_progress", default=False)


@contextmanager
def _download_bars() -> Iterator[None]:
    """huggingface_hub's bars as SHOW_DOWNLOAD_PROGRESS says, restored afterwards."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was_disabled = are_progress_bars_disabled()
    if not SHOW_DOWNLOAD_PROGRESS.get() and not was_disabled:
        disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled and are_progress_bars_disabled():
            enable_progress_bars()


def looks_like_hub_id(text: str) -> bool:
    """'owner/name' (or 'owner/name@revision') that is not a file or directory here and not a
    .json file name."""
    return bool(_HUB_ID.match(text)) and not text.endswith(".json") and not os.path.exists(text)


def check_hub_id(hub_id: str) -> tuple[str, str | None]:
    """(repository, revision or None) of a hub id that follows the hub's naming rules; else one
    ConfigError line naming the id and the rule."""
    repo, at, revision = hub_id.partition("@")
    where = f"hub id {show(hub_id)}"
    for part in repo.split("/"):
        if not _HUB_PART.fullmatch(part) or "--" in part or ".." in part or part.endswith(".git"):
            raise ConfigError(
                f"{where} is not a repository id: owner and name are 1 to 96 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit, without '--' or '..'"
            )
    if at and (not _REVISION.fullmatch(revision) or ".." in revision.split("/")):
        raise ConfigError(f"{where}: revision {show(revision)} must be a branch, tag or commit name (no '..')")
    return repo, revision or None


def hub_cache_dir() -> Path:
    """The cache the Hugging Face tools share, as the environment says at call time."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _TRUE


def hub_config_path(hub_id: str) -> str:
    """The local path of `hub_id`'s config.json: from the cache when offline, else downloaded
    (that file alone). One ConfigError line for a gated, missing or unreachable repository, an
    id the hub would refuse, or a cache entry that points outside the cache."""
    repo, revision = check_hub_id(hub_id)
    where = f"hub id {show(hub_id)}"
    for name in ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"):  # read by huggingface_hub when first imported
        os.environ.setdefault(name, str(HUB_TIMEOUT_SECONDS))
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ConfigError(f"{where}: reading a hub id needs huggingface_hub (pip install huggingface_hub)") from None
    cache = hub_cache_dir()
    fetch = dict(revision=revision, cache_dir=cache)
    try:  # the cache first: a cached config.json needs no network (config files do not change)
        path = hf_hub_download(repo, "config.json", local_files_only=True, **fetch)
    except ValueError:  # the client's HFValidationError, or refs naming a path that is no commit
        raise ConfigError(f"{where}: the local cache ({cache}) holds a broken entry for it") from None
    except OSError:  # LocalEntryNotFoundError: not cached
        if offline():
            raise ConfigError(
                f"{where}: its config.json is not in the local cache ({cache}) and HF_HUB_OFFLINE is set; "
                "run once online, or give the path to a config.json"
            ) from None
        path = _download(repo, fetch, where, revision)
    return _inside_cache(path, cache, where)


def _download(repo: str, fetch: dict, where: str, revision: str | None) -> str:
    """config.json alone from the hub, each failure as one ConfigError line."""
    from huggingface_hub import errors as hub_errors
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # one Error line, not the client's retry warnings
    print(  # at once, before any wait on the network (issue 40: a silent 26 s)
        f"fetching config for {repo}; set HF_HUB_OFFLINE=1 to use only the local cache",
        file=sys.stderr,
        flush=True,
    )
    try:
        with _download_bars():
            return hf_hub_download(repo, "config.json", etag_timeout=HUB_TIMEOUT_SECONDS, **fetch)
    except hub_errors.GatedRepoError:
        raise ConfigError(
            f"{where} is gated: accept its licence on huggingface.co, then log in (hf auth login, or HF_TOKEN)"
        ) from None
    except hub_errors.RepositoryNotFoundError:
        raise ConfigError(f"{where}: no such model on the Hugging Face hub (or it is private: log in)") from None
    except hub_errors.RevisionNotFoundError:
        raise ConfigError(f"{where}: no revision {show(revision)} in that repository") from None
    except hub_errors.LocalEntryNotFoundError:
        raise ConfigError(
            f"{where}: its config.json is not in the local cache ({fetch['cache_dir']}) and the hub could not be "
            "reached; run once online, or give the path to a config.json"
        ) from None
    except (hub_errors.EntryNotFoundError, hub_errors.RemoteEntryNotFoundError):
        raise ConfigError(f"{where} has no config.json") from None
    except (OSError, ValueError) as exc:  # network, HTTP, an unwritable cache; the client's validation
        raise ConfigError(f"{where}: config.json could not be fetched ({type(exc).__name__})") from None


def _inside_cache(path: str, cache: Path, where: str) -> str:
    """`path` when its snapshot folder lies inside the cache (refs/main naming '../../etc' would
    lead elsewhere); the file itself may be a link into the cache's blobs."""
    folder = os.path.realpath(os.path.dirname(path))
    if os.path.commonpath([folder, os.path.realpath(cache)]) != os.path.realpath(cache):
        raise ConfigError(f"{where}: the local cache ({cache}) points its snapshot outside the cache")
    return path
