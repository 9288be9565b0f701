"""One door for every architecture: the commands that size one model (`estimate`, `memory`) take a
hybrid, a vision-language model or any model_type transformers knows, as a preset or a config,
directly. A stack of identical attention + MLP blocks (every model_type sizing.inputs.hf reads)
keeps its own path (None here); a hybrid or vision-language config or preset is sized by
sizing.whole from sizing.hybrid and sizing.vision; any other model_type is counted by
transformers on the meta device (hf_meta, the `hf` extra), labelled so on every output.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

from sizing.cli.common import UserError
from sizing.validate import SizingError

REMOTE_CODE_HELP = (
    "Run the Python code a trust_remote_code model ships in its repository (config.json `auto_map`) "
    "to build it on the meta device. Without it no model code is ever run. Only for code you trust."
)
run_remote_code_option = click.option("--run-remote-code", "run_remote_code", is_flag=True, help=REMOTE_CODE_HELP)


@dataclass(frozen=True)
class WholeSource:
    data: dict  # the parsed HF config
    name: str
    where: str | None  # the file, folder or hub id (a remote-code model's code lives there)
    kind: str  # sizing.whole.config_kind: hybrid, vision-language or transformers


def whole_source(preset: str | None, config_path: str | None, overrides: tuple[str, ...]) -> WholeSource | None:
    """The config of a model sizing.formulas does not size as one stack; None for a stack."""
    from sizing.whole import config_kind, whole_preset_config

    if preset and config_path:
        raise UserError("give either --preset or --config, not both")
    if preset:
        data, name, where = whole_preset_config(preset.strip().lower()), preset, None
        if data is None:
            return None
    elif config_path:
        from sizing.inputs.hf import _read_json_object

        try:
            data = _read_json_object(config_path)
        except SizingError as exc:
            raise UserError(str(exc)) from None
        if "model_type" not in data and "architectures" not in data:
            return None  # this tool's own JSON, or a file the stack reader refuses with its reason
        name, where = config_path, config_path
    else:
        return None
    kind = config_kind(data)
    if kind is None:
        return None
    if overrides:
        raise UserError(
            f"--set applies to attention + MLP stacks; {name} is a {kind} model: edit its config.json instead"
        )
    return WholeSource(data, name, where, kind)


def whole_model(source: WholeSource, seq_len: int | None, attention: str, run_remote_code: bool = False):
    """The WholeModel of `source` at seq_len (default: the context its config states)."""
    from sizing.whole import default_context, native_whole_model

    try:
        if seq_len is None:
            seq_len, where = default_context(source.data, source.name)
        else:
            where = "--seq-len"
        if source.kind != "transformers":
            return native_whole_model(source.data, source.name, seq_len, attention, where)
        from hf_meta import measure_whole_model

        return measure_whole_model(source.data, source.name, seq_len, source.where, run_remote_code, where)
    except SizingError as exc:
        raise UserError(str(exc)) from None
