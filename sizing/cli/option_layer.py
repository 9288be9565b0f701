"""What a command imports to declare its options: `option(key, ...)` builds one click option from
the table (sizing/cli/spec_table.py, spec_table_commands.py; the rules in sizing/cli/specs.py),
`options(...)` applies several in --help order, and `model_options` is the model's three
(--preset, --config, --set) that most commands take.

    @click.command()
    @model_options
    @option("seq_len", help="Tokens per sequence (default: the preset's context).")
    @option("gpu")
    @option("format")
    def my_command(preset, config_path, overrides, seq_len, gpu, fmt): ...
"""

from __future__ import annotations

from typing import Any

import click

from sizing.cli import spec_table  # noqa: F401  (it fills SPECS with the shared options)
from sizing.cli.specs import SPECS, UNSET, OptionSpec, SpecOption


def spec(key: str) -> OptionSpec:
    if key not in SPECS:  # a command-only option: that part of the table loads with the first command using one
        from sizing.cli import spec_table_commands  # noqa: F401
    try:
        return SPECS[key]
    except KeyError:
        raise KeyError(f"no option {key!r} in sizing/cli/spec_table.py or spec_table_commands.py") from None


def option(
    key: str,
    *,
    dest: str | None = None,
    default: Any = UNSET,
    help: str | None = None,
    short: Any = UNSET,
    multiple: bool | None = None,
    only: tuple | None = None,
    as_list: bool = False,
    needs: tuple[str, ...] | None = None,
    names: str | None = None,
):
    """The click decorator of option `key`, with this command's stated differences (see
    sizing/cli/specs.py for what a command may change: never the parser or its range).
    `needs` and `names` change only what the form does (when it applies, which list it offers)."""
    s = spec(key)
    if needs is not None or names is not None:  # the same checks as a declaration's
        s._replace(needs=tuple(needs or ()), names=names or s.names).check()
    stated = dict(dest=dest, help=help, multiple=multiple, only=only, as_list=as_list or None)
    stated |= dict(needs=tuple(needs) if needs is not None else None, names=names)
    overrides = {name: value for name, value in stated.items() if value is not None}
    if default is not UNSET:
        overrides["default"] = default
    if short is not UNSET:
        overrides["short"] = short
    flags = list(s.flags) if short is UNSET else [s.flag] + ([short] if short else [])
    if s.off_flag:
        flags[0] = f"{flags[0]}/{s.off_flag}"
    attrs: dict[str, Any] = dict(
        default=s.default if default is UNSET else default,
        help=s.help if help is None else help,
        multiple=s.multiple if multiple is None else multiple,
        callback=s.callback if multiple is None else None,
        hidden=s.hidden,
    )
    if s.is_flag or s.off_flag:
        attrs["is_flag"] = True
        if s.is_flag and not s.off_flag and attrs["default"] is None:
            attrs["default"] = False  # a plain flag is off unless given
    elif as_list:
        listed = f"Values of {dest or s.dest or key} (comma list or start:stop:step)."
        attrs.update(metavar="V1,V2,...", help=help or listed)
    else:
        attrs["metavar"] = s.metavar
        if only is not None:
            attrs["type"] = _narrowed(s, only)
        elif s.type is not None:
            attrs["type"] = s.type
    attrs["show_default"] = attrs["default"] is not None and (not s.is_flag or bool(s.off_flag))
    name = dest or s.dest or key
    return click.option(*flags, name, cls=SpecOption, spec=s, overrides=overrides, **attrs)


def _narrowed(s: OptionSpec, only: tuple) -> click.ParamType:
    """The spec's Choice, restricted to the values a command can answer (same class, same aliases)."""
    parser = s.type
    missing = [v for v in only if v not in parser.choices]
    if missing:
        raise ValueError(f"option {s.key}: {missing} are not among its choices {parser.choices}")
    aliases = {a: c for a, c in parser.aliases.items() if c in only}
    return type(parser)(parser.option, only, aliases)


def options(*decorators):
    """Several option decorators applied in the order --help lists them."""

    def apply(command):
        for decorate in reversed(decorators):
            command = decorate(command)
        return command

    return apply


# --preset NAME | --config PATH (each at most once), plus repeatable --set FIELD=VALUE.
model_options = options(option("preset"), option("config"), option("set"))
