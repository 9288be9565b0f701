"""What every command shares: the user-error type (exit 2, one line), resolving the model that
--preset / --config / --set name (the options themselves: sizing/cli/option_layer.py) and parsing
of quantities. Light imports only."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import click

from sizing.validate import MAX_TOKENS, SizingError, show, show_arg

if TYPE_CHECKING:  # the model's types; their modules load when a command resolves a model
    from sizing.inputs import ModelConfig, Preset

FORMATS = ("table", "markdown", "json", "csv")


MAX_ERROR_CHARS = 240  # one line a terminal shows whole: the field, the value and what is valid fit


class UserError(click.ClickException):
    """Bad input: printed as one 'Error: ...' line on stderr, exit code 2, no traceback; cut at
    MAX_ERROR_CHARS (a long path or value is already cut where it is shown)."""

    exit_code = 2

    def format_message(self) -> str:
        message = super().format_message()
        return message if len(message) <= MAX_ERROR_CHARS else message[: MAX_ERROR_CHARS - 3] + "..."


class ModelChoice(NamedTuple):  # a NamedTuple: `sizing --help` loads no dataclasses
    name: str
    config: ModelConfig
    preset: Preset | None


def once(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | None:
    """The value of an option that names one model. Declared `multiple` so that a second
    `--preset` is seen and refused instead of silently replacing the first."""
    if len(values) > 1:
        raise UserError(
            f"{param.opts[0]} given {len(values)} times ({', '.join(map(show, values))}); give one "
            "model per command (`sizing verify` takes several)"
        )
    return values[0] if values else None


def use_calibration(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | None:
    """--calibration FILE: make the stack overheads `sizing calibrate` fitted the ones every step
    predicted after this uses (sizing.parallel.overhead); a bad file is one Error line."""
    path = once(ctx, param, values)
    if path is None:
        return None
    from sizing.parallel import use_calibration as use

    try:
        use(path)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    return path


def resolve_model(
    preset: str | None, config_path: str | None, overrides: tuple[str, ...], required: bool = True
) -> ModelChoice | None:
    if preset and config_path:
        raise UserError("give either --preset or --config, not both")
    file_model = _file_model() if not preset and not config_path else None
    if file_model is not None:  # a model --from FILE states whole (Megatron's architecture flags)
        name, cfg = file_model
        try:
            cfg = cfg.with_overrides(_parse_overrides(overrides)) if overrides else cfg
        except SizingError as exc:
            raise UserError(str(exc)) from None
        return ModelChoice(name, cfg, None)
    if not preset and not config_path:
        if not required:
            return None
        raise UserError("no model given: use --preset NAME (see `sizing presets`) or --config PATH")
    from sizing.inputs import get_preset

    chosen: Preset | None = None
    try:
        if preset:
            chosen = get_preset(preset)
            name, cfg = chosen.name, chosen.config
        else:
            # imported here: only a --config run pays for the Hugging Face mapping
            from sizing.inputs.hf import load_config_file
            from sizing.vision import text_only_label

            cfg = load_config_file(config_path)
            name = config_path + text_only_label(config_path)
        if overrides:
            cfg = cfg.with_overrides(_parse_overrides(overrides))
            name += " (" + ", ".join(overrides) + ")"
    except SizingError as exc:  # unknown preset, bad config file, bad --set value
        raise UserError(_other_command(preset) or str(exc)) from None
    return ModelChoice(name, cfg, chosen)


def _file_model():
    """(name, ModelConfig) that `--from FILE` stated shape by shape (sizing/cli/from_file.py), or None."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get("sizing.file_model")


def _other_command(preset: str | None) -> str | None:
    """The command that sizes a hybrid or vision-language preset, named in one line."""
    if not preset:
        return None
    from sizing.hybrid import HYBRID_PRESETS
    from sizing.vision import VISION_PRESETS

    for command, presets in (("hybrid", HYBRID_PRESETS), ("vision", VISION_PRESETS)):
        if preset in {p.name for p in presets}:
            return (
                f"--preset {preset} is not a stack of attention + MLP blocks: use `sizing {command} --preset {preset}`"
            )
    return None


def _parse_overrides(overrides: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for item in overrides:
        field, sep, value = item.partition("=")
        if not sep or not field.strip():
            raise UserError(f"--set ({show(item)}) must look like FIELD=VALUE, e.g. --set n_layers=48")
        parsed[field.strip()] = value
    return parsed


def quantity(value: str | None, name: str, maximum: int = MAX_TOKENS) -> int | None:
    """A positive count typed with an optional SI suffix (2T, 300B, 1.4e12), exactly."""
    if value is None:
        return None
    from sizing.inputs import parse_quantity

    try:
        number = parse_quantity(value, name, maximum)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    if number <= 0:
        raise UserError(f"{name} ({show_arg(value.strip())}) must be positive")
    return number
