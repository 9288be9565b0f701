"""`--from FILE` for estimate, memory, parallel and serve: a framework's file read as the options
of the command (sizing.frameworks), shown knob by knob. A knob fills an option only where the
user typed nothing (an explicit flag wins, and the header says so); a knob the command does not
take is listed as unused by it; the fields the calculator never uses are listed too. The values
pass through the option's own parser, so a file is checked exactly as the flags are."""

from __future__ import annotations

import functools

import click
from click.core import ParameterSource

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.cli.specs import SpecOption
from sizing.validate import SizingError

FILE_MODEL = "sizing.file_model"
FILE_KEYS = "sizing.file_keys"  # ctx.meta key: the options --from FILE set (as good as typed, for a command's checks)
# Options a command takes in another sense than a training file means them: `sizing memory --tp`
# is inference's tensor parallelism (a training layout is `sizing parallel`'s).
NOT_FROM_TRAINING = {"memory": ("tp",)}  # ctx.meta key: a ModelConfig the file states whole (resolve_model reads it)


def with_file(command):
    """Add --from / --from-format to a command (decorate right under @click.command())."""

    @functools.wraps(command)
    def run(*args, from_file=None, from_format=None, **kwargs):
        if from_file is None:
            if from_format is not None:
                raise UserError("--from-format names the format of --from FILE; give --from too")
            return command(*args, **kwargs)
        ctx = click.get_current_context()
        kwargs, lines = apply_file(ctx, from_file, from_format, kwargs)
        to_stderr = kwargs.get("fmt") in ("json", "csv") or kwargs.get("emit") is not None
        click.echo("\n".join(lines) + "\n", err=to_stderr)
        return command(*args, **kwargs)

    return option("from_file")(option("from_format")(run))


def apply_file(ctx: click.Context, path: str, fmt: str | None, kwargs: dict) -> tuple[dict, list[str]]:
    """kwargs with the file's knobs filled in where the user typed nothing, and the header lines."""
    from sizing.frameworks import read_settings

    try:
        settings = read_settings(path, fmt)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    params = {p.spec.key: p for p in ctx.command.params if isinstance(p, SpecOption)}
    used, overridden, unused = [], [], []
    model_typed = any(_typed(ctx, params[k]) for k in ("preset", "config") if k in params)
    for knob in settings.knobs:
        param = params.get(knob.key)
        if knob.key in NOT_FROM_TRAINING.get(ctx.command.name, ()) and settings.get("inference") is None:
            param = None  # a training file's tp is not `sizing memory`'s inference --tp
        if param is None:
            unused.append(f"{_flag_text(knob.key, knob.value)} ({knob.field})")
        elif _typed(ctx, param) or (knob.key in ("preset", "config") and model_typed):
            overridden.append(f"{param.opts[0]} (the file: {knob.value}, {knob.field})")
        else:
            kwargs[param.name] = _converted(ctx, param, knob, settings)
            ctx.meta.setdefault(FILE_KEYS, set()).add(param.name)
            used.append((_flag_text(knob.key, knob.value, param), knob.field))
    if settings.model is not None and not model_typed:
        ctx.meta[FILE_MODEL] = (f"{path} (architecture)", settings.model)
    return kwargs, _header(ctx, settings, used, overridden, unused)


def given(ctx: click.Context, name: str) -> bool:
    """Whether option `name` was typed or set by --from FILE (not left to its default)."""
    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None) or name in ctx.meta.get(FILE_KEYS, ())


def _typed(ctx: click.Context, param) -> bool:
    return ctx.get_parameter_source(param.name) not in (ParameterSource.DEFAULT, None)


def _converted(ctx: click.Context, param, knob, settings):
    """The knob's value through the option's own parser; a bad one names the file's field."""
    if param.is_flag:
        return bool(knob.value)
    if knob.key in ("preset", "config"):
        return str(knob.value)
    try:
        return param.type.convert(str(knob.value), param, ctx) if param.type is not None else knob.value
    except click.ClickException as exc:
        raise UserError(f"{settings.path}: {knob.field}: {exc.format_message()}") from None


def _flag_text(key: str, value, param=None) -> str:
    from sizing.cli.option_layer import spec

    s = spec(key) if param is None else param.spec
    if s.off_flag:
        return s.flag if value else s.off_flag
    if s.is_flag:
        return s.flag
    return f"{s.flag} {value}"


def _header(ctx, settings, used, overridden, unused) -> list[str]:
    name = f"sizing {ctx.command.name}"
    lines = [f"From {settings.path} ({settings.format}): " + " ".join(text for text, _ in used)]
    width = max((len(text) for text, _ in used), default=0)
    lines += [f"  {text:<{width}}  from {field}" for text, field in used]
    if overridden:
        lines.append("  your flags win over the file: " + "; ".join(overridden))
    if unused:
        lines.append(f"  read but not used by `{name}`: " + "; ".join(unused))
    lines += [f"  note: {note}" for note in settings.notes]
    if settings.ignored:
        lines.append(
            f"  ignored ({len(settings.ignored)} fields the calculator does not use): " + ", ".join(settings.ignored)
        )
    return lines
