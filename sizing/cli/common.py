"""What every command shares: the user-error type (exit 2, one line), the model options
(--preset / --config / --set) and parsing of quantities. Light imports only."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import click

from ..config import ConfigError, ModelConfig
from ..presets import Preset, get_preset
from ..units import QuantityError, parse_quantity

FORMATS = ("table", "markdown", "json", "csv")


class UserError(click.ClickException):
    """Bad input: printed as one 'Error: ...' line on stderr, exit code 2, no traceback."""

    exit_code = 2


@dataclass(frozen=True)
class ModelChoice:
    name: str
    config: ModelConfig
    preset: Preset | None


def model_options(func):
    """--preset NAME | --config PATH, plus repeatable --set FIELD=VALUE overrides."""

    @click.option("--preset", "-p", metavar="NAME", help="A preset name (see `sizing presets`).")
    @click.option("--config", "config_path", metavar="PATH",
                  help="A Hugging Face config.json or this tool's JSON config. Never executes code.")
    @click.option("--set", "overrides", metavar="FIELD=VALUE", multiple=True,
                  help="Override a config field, e.g. --set n_layers=48 (repeatable).")
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def resolve_model(preset: str | None, config_path: str | None, overrides: tuple[str, ...],
                  required: bool = True) -> ModelChoice | None:
    if preset and config_path:
        raise UserError("give either --preset or --config, not both")
    if not preset and not config_path:
        if not required:
            return None
        raise UserError("no model given: use --preset NAME (see `sizing presets`) or --config PATH")
    chosen: Preset | None = None
    try:
        if preset:
            chosen = get_preset(preset)
            name, cfg = chosen.name, chosen.config
        else:
            from ..hf import load_config_file

            cfg = load_config_file(config_path)
            name = config_path
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    except (ConfigError, ValueError, OSError) as exc:
        raise UserError(str(exc)) from None
    if overrides:
        parsed = {}
        for item in overrides:
            field, sep, value = item.partition("=")
            if not sep or not field.strip():
                raise UserError(f"--set ({item!r}) must look like FIELD=VALUE, e.g. --set n_layers=48")
            parsed[field.strip()] = value
        try:
            cfg = cfg.with_overrides(parsed)
        except (ConfigError, ValueError) as exc:
            raise UserError(str(exc)) from None
        name += " (" + ", ".join(overrides) + ")"
    return ModelChoice(name, cfg, chosen)


def quantity(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    try:
        number = parse_quantity(value, name)
    except QuantityError as exc:
        raise UserError(str(exc)) from None
    if number <= 0:
        raise UserError(f"{name} ({value}) must be positive")
    return number


def positive_int(value: int | None, name: str) -> None:
    if value is not None and value <= 0:
        raise UserError(f"{name} ({value}) must be a positive integer")
