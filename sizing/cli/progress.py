"""Progress on stderr for the commands that can take seconds (`verify`, `report`, `sweep`, hub
downloads): click's own progress bar when stderr is a terminal, nothing at all when it is piped
or the output is JSON (a script reading both streams gets only the result).

    with progress_bar(total, "verify", fmt) as bar:
        for item in work:
            ...
            bar.advance(1, "gpt2 flops")       # the bar moves; the item shows beside it
            bar.note("MISMATCH gpt2 (flops)")  # a line above the bar, kept on screen

The work itself (reference_model.verify, sizing.report, sizing.plan) never prints: it yields
results or calls back, and only this module writes.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import click

BAR_WIDTH = 24  # characters of the bar itself; the label, count, ETA and item sit beside it


def progress_wanted(fmt: str | None = None, stream: IO | None = None) -> bool:
    """A bar is shown when `stream` (stderr) is a terminal and the output is not JSON."""
    stream = sys.stderr if stream is None else stream
    if fmt == "json":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or not a real stream
        return False


class Progress:
    """What a long command reports: steps done (with the item just finished) and lines that
    must stay on screen (a failure as it happens; call `note` before the `advance` of its
    step). The quiet one does nothing."""

    def advance(self, steps: int = 1, item: str | None = None) -> None:
        pass

    def note(self, line: str) -> None:
        pass

    def say(self, line: str) -> None:
        """A message that is always shown (stderr): above the bar on a terminal, else plainly."""
        click.echo(line, err=True)


class _Bar(Progress):
    def __init__(self, bar, stream: IO):
        self.bar, self.stream = bar, stream

    def advance(self, steps: int = 1, item: str | None = None) -> None:
        self.bar.update(steps, item)

    def say(self, line: str) -> None:
        self.note(line)

    def note(self, line: str) -> None:
        # written over the bar's line (padded to the terminal's width, so no bar is left
        # behind it); the next advance draws the bar again below it
        width = max(len(line), shutil.get_terminal_size().columns - 1)
        click.echo("\r" + line.ljust(width), file=self.stream)


ITEM_CHARS = 40  # the item beside the bar, cut so that the line fits a terminal


def _short(item: str | None) -> str | None:
    return item if item is None or len(item) <= ITEM_CHARS else item[: ITEM_CHARS - 1] + "…"


@contextmanager
def progress_bar(total: int, label: str, fmt: str | None = None, stream: IO | None = None) -> Iterator[Progress]:
    """A click progress bar of `total` steps on `stream` (stderr), or a quiet Progress when
    progress_wanted says no. The bar is cleared to its final state and a newline ends it."""
    stream = sys.stderr if stream is None else stream
    if not progress_wanted(fmt, stream) or total <= 0:
        yield Progress()
        return
    with click.progressbar(
        length=total,
        label=label,
        file=stream,
        show_pos=True,
        show_eta=True,
        item_show_func=_short,
        width=BAR_WIDTH,
    ) as bar:
        yield _Bar(bar, stream)


@contextmanager
def download_progress(fmt: str | None = None) -> Iterator[None]:
    """Within it, a hub download (`--config owner/name`) draws huggingface_hub's own bar when
    progress_wanted(fmt); outside it, and otherwise, downloads are quiet."""
    from sizing.inputs.hf import SHOW_DOWNLOAD_PROGRESS

    token = SHOW_DOWNLOAD_PROGRESS.set(progress_wanted(fmt))
    try:
        yield
    finally:
        SHOW_DOWNLOAD_PROGRESS.reset(token)
