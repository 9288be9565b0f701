"""The browser calculator's JSON API: one endpoint per question, each answered by running the
same `sizing` command with `--format json` in this process. The web and the CLI therefore call
the same functions and the same JSON renderer, and cannot disagree: the payload's `result` is
the command's own JSON, with integers beyond 2^53 written as strings (JavaScript numbers are
doubles and would round them).

A request is a list of (option, value) pairs, named as the command's long options without the
dashes (`seq-len=4096`, `set=n_layers=48`, `preset=llama2-7b` twice for compare). Only options
that the command declares are accepted; `format` is always json; a config file is never named by
the request: a pasted config.json travels as text (`config_text`) and is written to a private
temporary file for the command, then its path is replaced by `config.json` in the answer.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import sys
import tempfile
import threading

import click

from sizing.validate import SizingError

# every question of the CLI (the listings, `sizing presets` and `sizing gpus`, come with /api/lists)
ENDPOINTS = (
    "estimate", "memory", "parallel", "serve", "plan", "compare", "hybrid", "vision", "speculate", "serve-layout",
    "sweep",
)  # fmt: skip
# the largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER)
MAX_SAFE_INTEGER = 2**53 - 1
# `sizing memory` exits 3 when the model does not fit: a result, not an error
EXIT_DOES_NOT_FIT = 3
PASTED_CONFIG_NAME = "config.json"
# never taken from a request: the output format is fixed, files are not named by the web
# (--config, --from read them; --emit --out writes one), and no request makes the server run a
# repository's model code (--run-remote-code)
_REFUSED = frozenset({"format", "config", "help", "version", "from", "from-format", "emit", "out", "run-remote-code"})


class ApiError(Exception):
    """Bad input: HTTP 400 with the CLI's one-line message."""


def _command(endpoint: str) -> click.Command:
    from sizing.cli import main

    if endpoint not in ENDPOINTS:
        raise ApiError(f"unknown endpoint ({endpoint!r}); valid: {', '.join(ENDPOINTS)}")
    return main.get_command(click.Context(main), endpoint)


# an option whose value names a file on the server (a trace, a config path) is never the web's
FILE_METAVARS = frozenset({"PATH", "FILE", "DIR"})


def _names_a_file(param: click.Option) -> bool:
    spec = getattr(param, "spec", None)
    return spec is not None and spec.metavar in FILE_METAVARS


def _options(command: click.Command) -> dict[str, click.Option]:
    """Request key (long option without dashes) -> option, for the options a request may set."""
    found = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden or _names_a_file(param):  # hidden: the server's own
            continue
        for opt in param.opts:
            key = opt.lstrip("-")
            if opt.startswith("--") and key not in _REFUSED:
                found[key] = param
    return found


TRUE_WORDS = ("1", "true", "on", "yes")
FALSE_WORDS = ("0", "false", "off", "no", "")


def command_args(endpoint: str, pairs: list[tuple[str, str]]) -> list[str]:
    """The `sizing` arguments (without the program name) for a request's (key, value) pairs."""
    command = _command(endpoint)
    options = _options(command)
    args = [endpoint]
    for key, value in pairs:
        if key == "config_text":
            continue
        if key == "hub":  # a Hugging Face model id: read as --config reads one (config.json only, never code)
            args += ["--config", _hub_id(value)]
            continue
        option = options.get(key)
        if option is None:
            valid = ", ".join(sorted(options))
            raise ApiError(f"{key} is not an option of `sizing {endpoint}`; valid: {valid}")
        if option.is_flag:
            args += _flag(option, key, value)
        else:
            args += [f"--{key}", value]
    return args


def _hub_id(value: str) -> str:
    """A hub id the page may name (owner/name[@revision], not a path that exists here)."""
    from sizing.inputs.hf import looks_like_hub_id

    text = value.strip()
    if not looks_like_hub_id(text):
        raise ApiError(f"hub ({value!r}) must be a Hugging Face model id, e.g. meta-llama/Llama-3.1-8B")
    return text


def _flag(option: click.Option, key: str, value: str) -> list[str]:
    word = value.strip().lower()
    if word not in TRUE_WORDS + FALSE_WORDS:
        raise ApiError(f"{key} ({value!r}) is a switch: give 1 or 0")
    if word in TRUE_WORDS:
        return [f"--{key}"]
    if option.secondary_opts and f"--{key}" in option.opts:
        return [option.secondary_opts[0]]
    return []


# What each thread running a command writes: thread id -> its (stdout, stderr) buffers. One
# registry for the process, read by every ThreadOutput installed on sys.stdout / sys.stderr.
_CAPTURED: dict[int, tuple[io.StringIO, io.StringIO]] = {}
_INSTALL = threading.Lock()  # held for the instant of swapping sys.stdout, never while a command runs


class ThreadOutput(io.TextIOBase):
    """A stand-in for sys.stdout (or sys.stderr), installed once: what a thread running a command
    writes goes to that thread's buffer; what any other thread writes goes on to the stream that
    was there. sys.stdout is one for the whole process, so this is what lets several commands run
    at once without a lock, and a print elsewhere never lands in a command's JSON."""

    encoding = "utf-8"  # click writes text to a stream that names its encoding

    def __init__(self, passthrough, index: int):
        super().__init__()
        self.passthrough, self.index = passthrough, index

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        captured = _CAPTURED.get(threading.get_ident())
        if captured is not None:
            return captured[self.index].write(text)
        return self.passthrough.write(text) if self.passthrough is not None else len(text)

    def flush(self) -> None:
        if self.passthrough is not None and threading.get_ident() not in _CAPTURED:
            self.passthrough.flush()


def _install_outputs() -> None:
    """ThreadOutput on sys.stdout and sys.stderr, unless there already (a test harness may have
    swapped in its own stream since: the new one is wrapped in turn)."""
    with _INSTALL:
        if not isinstance(sys.stdout, ThreadOutput):
            sys.stdout = ThreadOutput(sys.stdout, 0)
        if not isinstance(sys.stderr, ThreadOutput):
            sys.stderr = ThreadOutput(sys.stderr, 1)


def run_cli(args: list[str], hide: dict[str, str] | None = None) -> tuple[int, str]:
    """Run `sizing ARGS` here: (exit code, stdout). Bad input raises ApiError with the message
    the CLI prints after 'Error: ', each key of `hide` (a temporary path) replaced by its value
    before the line is cut to the CLI's length. Several may run at once, on different threads."""
    from sizing.cli import main

    _install_outputs()
    ident = threading.get_ident()
    out, err = io.StringIO(), io.StringIO()
    _CAPTURED[ident] = (out, err)
    try:
        code = _invoke(main, args, hide or {})
    finally:
        del _CAPTURED[ident]
    return code, out.getvalue()


def _invoke(main, args: list[str], hide: dict[str, str]) -> int:
    """The exit code of `sizing ARGS`; a bad-input exception as ApiError."""
    from sizing.cli import UserError  # its format_message cuts a line as the CLI prints it

    try:
        main.main(args=args, prog_name="sizing", standalone_mode=False)
    except (click.ClickException, SizingError) as exc:
        message = exc.message if isinstance(exc, click.ClickException) else str(exc)  # whole, not yet cut
        for secret, shown in hide.items():
            message = message.replace(secret, shown)
        raise ApiError(UserError(message).format_message()) from None
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def js_safe(value):
    """The value with every integer beyond 2^53 - 1 in size as its decimal string."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        return str(value)
    if isinstance(value, dict):
        return {k: js_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [js_safe(v) for v in value]
    return value


def answer(endpoint: str, pairs: list[tuple[str, str]], extra: tuple[str, ...] = ()) -> dict:
    """The payload for one request: the command line, its exit code and its JSON result.
    `extra`: arguments of the server's own (never a request's), e.g. fits_by_gpu's."""
    args = command_args(endpoint, pairs) + list(extra)
    config_text = next((v for k, v in pairs if k == "config_text"), None)
    shown = ["sizing"] + args + (["--config", PASTED_CONFIG_NAME] if config_text is not None else [])
    with tempfile.TemporaryDirectory(prefix="sizing-ui-") as folder:
        run_args, hide = list(args), {}
        if config_text is not None:
            path = os.path.join(folder, PASTED_CONFIG_NAME)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(config_text)
            run_args += ["--config", path]
            hide = {path: PASTED_CONFIG_NAME, folder: "."}  # the server's temporary path is never shown
        code, text = run_cli(run_args + ["--format", "json"], hide)
        if config_text is not None:
            text = text.replace(json.dumps(path)[1:-1], PASTED_CONFIG_NAME)
    if code not in (0, EXIT_DOES_NOT_FIT):
        raise ApiError(f"`{shlex.join(shown)}` ended with exit code {code}")
    result = json.loads(text)
    from sizing.ui.verdict import verdict, verdict_label

    return {
        "endpoint": endpoint,
        "command": shlex.join(shown + ["--format", "json"]),
        "exit_code": code,
        "result": js_safe(result),
        "verdict": verdict(endpoint, result),
        "verdict_label": verdict_label(endpoint, result),
        "formulas": _formulas(endpoint, result),
    } | present(endpoint, result)


def present(endpoint: str, result) -> dict:
    """How the page shows an answer, read from its JSON: the cards of the numbers asked for
    (sizing.ui.cards), the stacked bar of one GPU's memory and the advice that makes it fit
    (sizing.ui.fit), and words and a unit for every key (sizing.ui.fields)."""
    from sizing.ui.cards import cards, notes
    from sizing.ui.fields import fields
    from sizing.ui.fit import advice, bar

    return {
        "cards": js_safe(cards(endpoint, result)),
        "notes": notes(result),
        "bar": js_safe(bar(endpoint, result)),
        "advice": advice(endpoint, result),
        "fields": fields(result),
    }


def _formulas(endpoint: str, result) -> dict:
    """Estimate's formulas with the model's numbers plugged in (sizing.ui.formulas)."""
    if endpoint != "estimate":
        return {}
    from sizing.ui.formulas import plugged_formulas

    return plugged_formulas(result)


def fits_by_gpu(endpoint: str, pairs: list[tuple[str, str]]) -> list[dict]:
    """The same question asked of every GPU in `sizing gpus`: [{gpu, fits}], fits None where the
    answer has no verdict or the GPU cannot run it (e.g. no fp8 peak)."""
    from sizing.inputs import GPUS
    from sizing.ui.verdict import VERDICT_LABELS, verdict

    if endpoint not in VERDICT_LABELS:
        raise ApiError(f"`sizing {endpoint}` answers no fit question; the fit list is for {', '.join(VERDICT_LABELS)}")
    rows = []
    kept = [(k, v) for k, v in pairs if k != "gpu"]
    # only what decides the verdict (the first layout that fits, no advice): the same verdict, a fraction of the work
    extra = ("--verdict-only",) if endpoint in ("parallel", "memory", "plan", "serve") else ()
    for key in GPUS:
        try:
            fits = verdict(endpoint, answer(endpoint, kept + [("gpu", key)], extra)["result"])
        except ApiError:
            fits = None
        rows.append({"gpu": key, "fits": fits})
    return rows


MODEL_KEYS = ("preset", "set")  # set on the page's model panel, not among a question's options
NAME_LISTS = ("presets", "gpus")  # what `sizing presets` / `sizing gpus` list, as their JSON


def option_specs(endpoint: str) -> list[dict]:
    """The options of `sizing ENDPOINT` as the page draws them, from the one option layer
    (sizing.cli.specs.command_options: key, kind, group, advanced, choices, min/max, default,
    help, ...), read off the built command, so the form offers exactly what the CLI takes."""
    from sizing.cli import command_options

    hidden = set(MODEL_KEYS) | _REFUSED
    return [
        s for s in command_options(_command(endpoint)) if s["key"] not in hidden and s["metavar"] not in FILE_METAVARS
    ]


def model_inputs(endpoint: str) -> dict:
    """How the page's model panel asks `sizing ENDPOINT` for a model: the list its --preset
    names (None: it takes none), whether several, and whether it takes --config and --set."""
    from sizing.cli import command_options

    found = {o["key"]: o for o in command_options(_command(endpoint)) if o["key"] in (*MODEL_KEYS, "config")}
    preset = found.get("preset")
    return {
        "presets": preset["names"] if preset else None,
        "multiple": bool(preset and preset["multiple"]),
        "config": "config" in found,
        "set": "set" in found,
        "set_help": found["set"]["help"] if "set" in found else None,
    }


def _preset_rows(kind: str) -> list[dict]:
    """hybrid_presets / vision_presets: name, published parameters and source of each."""
    if kind == "hybrid_presets":
        from sizing.hybrid import HYBRID_PRESETS as presets
    else:
        from sizing.vision import VISION_PRESETS as presets
    return [{"name": p.name, "published_params": p.published_total, "source": p.source} for p in presets]


def lists() -> dict:
    """What the page draws its forms from: the name lists (`sizing presets` / `sizing gpus` JSON,
    the hybrid and vision-language presets), each endpoint's options (the CLI's option specs) and
    model inputs, and the groups the form shows the options in, in order."""
    from sizing.cli import OPTION_GROUPS

    out = {name: json.loads(run_cli([name, "--format", "json"])[1]) for name in NAME_LISTS}
    out |= {kind: _preset_rows(kind) for kind in ("hybrid_presets", "vision_presets")}
    return out | {
        "options": {endpoint: option_specs(endpoint) for endpoint in ENDPOINTS},
        "models": {endpoint: model_inputs(endpoint) for endpoint in ENDPOINTS},
        "groups": [{"key": k, "label": label} for k, label in OPTION_GROUPS],
    }
