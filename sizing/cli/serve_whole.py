"""`sizing serve` of a model that is not one stack of attention + MLP blocks (sizing.cli.any_model's
one door), as a preset or a config: a hybrid on the serving step model with its attention layers'
KV cache and the other layers' state (sizing.serve.serve_hybrid); a vision-language model as its
language model with the image tokens in the prompt and the tower before it (serve_vlm, with
--images and --image-size); Gemma 3n and any model counted by transformers from its WholeModel
at the prompt's and the output's end, one GPU per replica (sizing.serve.serve_whole).

A static batch only: the options of the stack's own paths (capacity planning with --rate, layouts
over --gpus, prefix caching, the engines' files) are refused when given, never ignored."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.from_file import given as option_given
from sizing.validate import SizingError

EXIT_DOES_NOT_FIT = 3
HONOURED = ("prompt", "output", "batch", "gpu", "tp", "weight_dtype", "kv_dtype", "images", "image_size")
_MODEL = ("preset", "config_path", "overrides", "fmt", "from_file", "from_format")


def _refuse_unhonoured(name: str, kind: str) -> None:
    """Every option given (typed or from --from FILE) that this path does not use: one error line."""
    ctx = click.get_current_context()
    left_out = (() if kind in ("hybrid", "vision-language") else ("tp",)) + (
        () if kind == "vision-language" else ("images", "image_size")
    )
    honoured = tuple(k for k in HONOURED if k not in left_out)
    given = [
        p.opts[0]
        for p in ctx.command.params
        if p.name not in (*honoured, *_MODEL, "config", "run_remote_code", "format") and option_given(ctx, p.name)
    ]
    if given:
        raise UserError(
            f"{', '.join(given)}: {name} is a {kind} model, served as a static batch on "
            f"{'its GPUs' if kind in ('hybrid', 'vision-language') else 'one GPU'}: give "
            f"{', '.join('--' + k.replace('_', '-') for k in honoured)}"
        )


def serve_of_whole_model(command, source, run_remote_code: bool, kwargs: dict) -> None:
    """The handler of `answers_whole_models` for `sizing serve` (module docstring)."""
    from sizing.render import render_other_serve

    o = kwargs
    if source.kind != "vision-language" and (o.get("images") is not None or o.get("image_size") is not None):
        raise UserError("--images and --image-size apply to a vision-language model")
    _refuse_unhonoured(source.name, source.kind)
    missing = [f"--{name}" for name in ("prompt", "output") if o.get(name) is None]
    if missing:
        raise UserError(f"{' and '.join(missing)} needed, e.g. --prompt 4096 --output 256")
    from sizing.inputs import default_gpu_for, get_gpu

    dtypes = {"weight_dtype": o.get("weight_dtype") or "bf16", "kv_dtype": o.get("kv_dtype") or "bf16"}
    try:
        gpu = get_gpu(o.get("gpu") or default_gpu_for(None)).key
        shape = (o["prompt"], o["output"], o.get("batch") or 1, gpu)
        if source.kind in ("hybrid", "vision-language"):
            result = _native(source, shape, o.get("tp") or 1, dtypes, o.get("images"), o.get("image_size"))
        else:
            result = _counted(source, shape, dtypes, run_remote_code)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_other_serve(result, o.get("fmt") or "table").rstrip("\n"))
    if not result.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _native(source, shape: tuple, tp: int, dtypes: dict, images, image_size):
    """A hybrid's or a vision-language model's serve from its own config (this tool's readers)."""
    from sizing.hybrid import HYBRID_CONVERTERS, hybrid_from_hf_config
    from sizing.inputs.hf import resolve_model_type
    from sizing.serve import serve_hybrid, serve_vlm
    from sizing.vision import VISION_TYPES, parse_image_size, vlm_from_hf_config

    if source.kind == "hybrid":
        data = dict(source.data, model_type=resolve_model_type(source.data, HYBRID_CONVERTERS))
        model = hybrid_from_hf_config(dict(data, _name_or_path=source.name))
        return serve_hybrid(model, *shape, tp=tp, **dtypes)
    pair = vlm_from_hf_config(dict(source.data, model_type=resolve_model_type(source.data, VISION_TYPES)))
    size = parse_image_size(image_size or "896x896")
    count = 1 if images is None else images
    return serve_vlm(pair, *shape, tp=tp, **dtypes, images=count, image_size=size, name=source.name)


def _counted(source, shape: tuple, dtypes: dict, run_remote_code: bool):
    """Gemma 3n or a transformers-counted model: its WholeModel at P and at P + O tokens."""
    from sizing.cli.any_model import whole_model
    from sizing.serve import serve_whole

    prompt, output, batch, gpu = shape
    if output < 2:
        raise SizingError(f"output ({output}) must be at least 2 tokens (the prefill yields the first)")
    at_prompt = whole_model(source, prompt, "causal", run_remote_code, activations=False)
    at_end = whole_model(source, prompt + output, "causal", run_remote_code, activations=False)
    text = source.data.get("text_config") if isinstance(source.data.get("text_config"), dict) else source.data
    layers = text.get("num_hidden_layers") or text.get("n_layer") or text.get("num_layers") or 1
    return serve_whole(at_prompt, at_end, batch, gpu, layers=int(layers), **dtypes)
