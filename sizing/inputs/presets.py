"""Presets: real architectures, each with its source. The entries are data, in
`sizing/data/presets.json` (and a user's own presets.json: sizing.inputs.data_files); this module
holds their record type, reads them once on first use and looks names up.

`published_params` is the exact count the source reports (checked by a test); where a
source gives only a rounded figure it goes in `published_params_rounded`. `context` is the
training context length and `training_tokens` the published pre-training tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import data_files
from sizing.inputs.config import ConfigError, ModelConfig
from sizing.inputs.names import lookup


@dataclass(frozen=True)
class Published:
    """Published parameter figures exactly as the source prints them ("671B", "20.91B"), with what
    they count: `total_counts` "total" (the model as sized) or "with_vision" (the whole image-text
    checkpoint; the preset is its text model); `active_counts` "active" (every parameter one
    token uses) or "active_without_embedding" (the input embedding left out). `rounding`:
    "round" to the last printed digit, or "truncate" where the source cuts digits instead."""

    total: str
    active: str | None = None
    total_counts: str = "total"
    active_counts: str = "active"
    rounding: str = "round"
    note: str = ""


def published_value(text: str) -> int:
    """ "671B" -> 671e9, "20.91B" -> 20.91e9, "25,600M" -> 25.6e9, exactly (no float rounding)."""
    scale = {"B": 10**9, "M": 10**6, "T": 10**12}[text[-1]]
    whole, _, fraction = text[:-1].replace(",", "").partition(".")
    # integer arithmetic (no decimal module on the startup path); digits past the scale are cut
    return int(whole or "0") * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)


@dataclass(frozen=True)
class Preset:
    name: str
    family: str
    config: ModelConfig
    source: str
    context: int
    training_tokens: int | None = None
    tokens_source: str | None = None
    published_params: int | None = None  # exact, as the source prints it
    published_params_rounded: float | None = None  # e.g. 125e6 from a paper table
    hf_id: str | None = None
    notes: str = ""
    published: Published | None = None  # the published figures as printed (modern presets)
    # the context the released model serves when it is longer than the pretraining `context`
    # (a long-context stage, RoPE scaling such as YaRN), with its source; None: = context
    served_context: int | None = None
    served_context_source: str | None = None

    @property
    def serving_context(self) -> int:
        """The longest prompt + output the released model is published to serve."""
        return self.context if self.served_context is None else self.served_context


def _config(value, label: str) -> ModelConfig:
    """A preset's `config` object: ModelConfig fields (lists read as tuples)."""
    if not isinstance(value, dict):
        raise data_files.DataFileError(f"{label}: config must be an object of ModelConfig fields")
    try:
        return ModelConfig.from_dict({k: tuple(v) if isinstance(v, list) else v for k, v in value.items()})
    except ConfigError as exc:
        raise data_files.DataFileError(f"{label}: config: {exc}") from None


def _published(value, label: str) -> Published:
    return data_files.build(Published, value, f"{label}: published")


@data_files.cached_table
def _tables() -> tuple[dict[str, Preset], dict[str, str]]:
    """(presets by name, aliases): the built-in file, then the user's (no name reused)."""
    return data_files.table_with_user_files(Preset, "presets", "name", {"config": _config, "published": _published})


PRESETS = data_files.LiveTable(_tables, 0)  # name -> Preset, read on first use
ALIASES = data_files.LiveTable(_tables, 1)


def get_preset(name: str) -> Preset:
    """A preset by name or alias; UnknownName (a SizingError and a KeyError) naming the
    closest presets otherwise."""
    presets, aliases = _tables()
    return lookup(name, presets, aliases, "preset", "see `sizing presets`")
