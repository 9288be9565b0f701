"""The one option layer: every command-line option is declared once, as an OptionSpec in
sizing/cli/spec_table.py (flags, parser, range, unit parsing, help, default, UI group), and
every command builds its options from that table with `option(key, ...)`; the browser form is
built from the same specs (`command_options`, served by sizing.ui), so a range, a parser or a
default cannot drift between two commands, or between the CLI and the page.

A command that really differs says so in its call, and only in these ways: `default` (e.g.
serve counts attention causal, estimate full), `help` (the sentence in that command's words),
`dest` (the Python name), `short` (its one-letter alias), `multiple` (compare takes several
--preset), `only` (a subset of the choices the command can answer, e.g. profile has no csv) and
`as_list` (sweep takes a comma list of values, each checked by the question); for the form only,
`needs` (when the option applies in that command, e.g. memory's training options without
--inference) and `names` (which list it offers: hybrid's own presets). The parser type
object itself is shared: `option.type is spec.type` for every option that is not `only` or
`as_list` (tests/test_option_specs.py walks every command and checks it).

The parser types are the classes of sizing/cli/options.py (Count, Length, Number, Quantity,
Choice, Name), built on first use so that importing this module loads no question package.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import click

UNSET: Any = object()  # "the spec's own": distinct from None, which is a real default

# The groups the browser form shows, in order: (key, label).
GROUPS: tuple[tuple[str, str], ...] = (
    ("command", "What to size"),
    ("model", "Model"),
    ("data", "Data and context"),
    ("hardware", "Hardware"),
    ("parallelism", "Parallelism"),
    ("precision", "Precision and memory"),
    ("training", "Training"),
    ("serving", "Serving"),
    ("engine", "Serving engine"),
    ("cost", "Cost and energy"),
    ("output", "Output"),
)
GROUP_KEYS = tuple(key for key, _ in GROUPS)
OPTION_GROUPS = GROUPS  # the name sizing.cli lends
# What a text option names, when it names a row of a table: the form offers that list (the
# hybrid and vision-language commands take presets of their own).
NAMES = ("gpus", "presets", "hybrid_presets", "vision_presets")


class OptionSpec(NamedTuple):
    """One option, as every command that takes it takes it (a NamedTuple: the table is built at
    every start of a command, and a NamedTuple class costs no generated code)."""

    key: str  # the table's key: also the Python name unless a command gives `dest`
    flags: tuple[str, ...]  # the long flag first, then aliases (--seq-len, -T)
    group: str  # one of GROUP_KEYS
    help: str
    make_type: Callable[[], click.ParamType] | None = None  # None: text (or a flag)
    default: Any = None
    metavar: str | None = None
    multiple: bool = False
    callback: Callable | None = None
    is_flag: bool = False
    off_flag: str | None = None  # an on/off switch's off spelling (--no-memory)
    advanced: bool = False  # the form folds it away
    names: str | None = None  # "gpus" / "presets": the value names a row of that table
    dest: str | None = None  # the Python name when it is not `key` (config_path for --config)
    hidden: bool = False  # the server's own switch: not in --help, the form or a request (--verdict-only)
    label: str | None = None  # the form's words for it ("Sequence length"); None: made from the key
    # When the option applies: each term must hold, else the form disables it (the CLI refuses the
    # combination with one line; tests/test_option_needs.py checks each term against the CLI).
    # A term names another option by its request key (the long flag without dashes): "engine"
    # (given), "!rate" (not given), "finetune=lora|qlora" (one of), "tp>1" (a number above).
    needs: tuple[str, ...] = ()

    def check(self) -> OptionSpec:
        if self.group not in GROUP_KEYS:
            raise ValueError(f"option {self.key}: group {self.group!r} must be one of {', '.join(GROUP_KEYS)}")
        if not self.flags or not self.flags[0].startswith("--"):
            raise ValueError(f"option {self.key}: the first flag must be a long one (--name)")
        if self.names is not None and self.names not in NAMES:
            raise ValueError(f"option {self.key}: names {self.names!r} must be one of {', '.join(NAMES)}")
        for term in self.needs:
            check_need(self.key, term)
        return self

    @property
    def title(self) -> str:
        """The form's label: the declared one, else the key in words ("seq_len" -> "Seq len")."""
        return self.label or self.key.replace("_", " ").capitalize()

    @property
    def type(self) -> click.ParamType | None:
        """The one parser of this option, shared by every command (built on first use, then kept)."""
        if self.key not in _PARSERS:
            _PARSERS[self.key] = None if self.make_type is None else self.make_type()
        return _PARSERS[self.key]

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def kind(self) -> str:
        """How the form draws it: switch, flag, choice, integer, number, quantity or text."""
        if self.off_flag:
            return "switch"
        if self.is_flag:
            return "flag"
        kinds = {
            "Choice": "choice",
            "Count": "integer",
            "Length": "integer",
            "Number": "number",
            "Quantity": "quantity",
        }
        return kinds.get(type(self.type).__name__, "text") if self.type is not None else "text"


_PARSERS: dict[str, click.ParamType | None] = {}  # key -> the parser object every command shares


class SpecOption(click.Option):
    """A click option built from an OptionSpec; `spec` and `overrides` say what it is."""

    def __init__(self, *decls, spec: OptionSpec, overrides: dict, **attrs):
        super().__init__(*decls, **attrs)
        self.spec, self.overrides = spec, overrides


NEED_TERM = re.compile(r"^(!?)([a-z][a-z0-9-]*)(?:(=)([A-Za-z0-9_.|-]+)|(>)(-?[0-9.]+))?$")


def check_need(key: str, term: str) -> None:
    if not NEED_TERM.match(term):
        raise ValueError(f"option {key}: needs term {term!r} must be KEY, !KEY, KEY=A|B or KEY>N")


# The table: key -> spec, filled by sizing/cli/spec_table.py and spec_table_commands.py through
# `declare`, read through sizing/cli/option_layer.py (which imports both).
SPECS: dict[str, OptionSpec] = {}


def declare(key: str, flags: tuple[str, ...], group: str, help: str, make_type=None, **fields) -> None:
    """Add option `key` to the table (once: a second declaration is an error)."""
    if key in SPECS:
        raise ValueError(f"option {key} declared twice")
    SPECS[key] = OptionSpec(key, flags, group, help, make_type, **fields).check()


def describe(labels: dict[str, str], needs: dict[str, tuple[str, ...]] | None = None) -> None:
    """Give declared options their form labels and, where a combination is refused by every
    command that takes them, their `needs` (a command that differs states its own in option())."""
    for key, label in labels.items():
        if key not in SPECS:
            raise ValueError(f"label for undeclared option {key!r}")
        SPECS[key] = SPECS[key]._replace(label=label)
    for key, terms in (needs or {}).items():
        if key not in SPECS:
            raise ValueError(f"needs for undeclared option {key!r}")
        SPECS[key] = SPECS[key]._replace(needs=tuple(terms)).check()


# ---------------------------------------------------------------- the specs as data (the browser form)
def option_dict(param: SpecOption) -> dict:
    """One option as JSON-able data: what the page needs to draw it and check it."""
    spec, parser = param.spec, param.type
    default = param.default
    if callable(default) or default is UNSET or type(default).__name__ == "Sentinel":
        default = None
    out = {
        "key": spec.flag[2:],
        "name": param.name,
        "flags": list(param.opts) + list(param.secondary_opts),
        "kind": "text" if param.overrides.get("as_list") else spec.kind,
        "group": spec.group,
        "advanced": spec.advanced,
        "help": param.help or "",
        "default": default if isinstance(default, (str, int, float, bool)) or default is None else None,
        # repeatable; an option declared multiple with a callback (--preset, --config: `once`) is
        # collected so that a repeat gets a clear error, and takes one value
        "multiple": bool(param.multiple) and param.callback is None,
        "flag": bool(param.is_flag),
        "names": param.overrides.get("names", spec.names),
        "label": spec.title,
        "needs": list(param.overrides.get("needs", spec.needs)),
        "metavar": spec.metavar,
        "choices": list(getattr(parser, "choices", None) or []) or None,
        "aliases": dict(getattr(parser, "aliases", None) or {}) or None,
        "min": getattr(parser, "minimum", None),
        "max": getattr(parser, "maximum", None),
        "exclusive_min": getattr(parser, "exclusive_minimum", False),
    }
    if out["flag"]:
        out["default"] = default is True
    return out


def command_options(command: click.Command) -> list[dict]:
    """Every option of a built command that a user may set, as option_dict data, in --help order
    (a hidden option is the server's own: sizing.ui.api refuses it in a request)."""
    return [option_dict(p) for p in command.params if isinstance(p, SpecOption) and not p.hidden]


def group_labels() -> dict[str, str]:
    return dict(GROUPS)
