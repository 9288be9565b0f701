"""`sizing vision`: a vision-language model sized whole (language model + vision tower +
projector), image tokens per image, and the prefill FLOPs of a prompt with images."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.inputs import format_int


def _load(preset: str | None, config_path: str | None):
    from sizing.vision import VISION_PRESETS, vision_preset, vlm_from_hf_config

    names = [p.name for p in VISION_PRESETS]
    if (preset is None) == (config_path is None):
        raise UserError(f"give one of --preset ({', '.join(names)}) or --config (a whole HF config.json)")
    if preset is not None:
        try:
            p = vision_preset(preset)
        except KeyError:
            raise UserError(
                f"--preset ({preset!r}) is not a vision-language preset; valid: {', '.join(names)}"
            ) from None
        return (*vlm_from_hf_config(p.hf_config), preset, p)
    from sizing.inputs.hf import load_family_config

    return (*load_family_config(config_path, vlm_from_hf_config), config_path, None)


def vision_summary(text, vision, name, prompt_tokens, images, height, width, attention) -> dict:
    from sizing.vision import prefill_with_images, vlm_active_params, vlm_params

    return {
        "name": name,
        "family": vision.family,
        "params": vlm_params(text, vision),
        "components": vision.params(),
        "active_params": vlm_active_params(text, vision),
        "text_only_params": vlm_params(text, vision)["language_model"],
        "image_size": [height, width],
        "images": images,
        "prompt_tokens": prompt_tokens,
        "flops_per_image": vision.image_flops(height, width),
        **prefill_with_images(text, vision, prompt_tokens, images, height, width, attention),
    }


@click.command()
@option("preset", help="A vision-language preset.", names="vision_presets")
@option("config", help="A whole (multimodal) Hugging Face config.json, its directory or a hub id. Never executes code.")
@option("images")
@option("image_size")
@option("prompt_tokens")
@option("attention", default="causal", help="Convention for the language model's attention FLOPs.")
@option("format")
def vision(preset, config_path, images, image_size, prompt_tokens, attention, fmt):
    """A vision-language model whole: language model + vision tower + projector, the tokens an
    image adds, the encoder FLOPs per image and the prefill FLOPs of a prompt with images.
    The text-only parameter count (what `sizing estimate` sizes) is shown beside it, labelled.

    \b
    Examples:
      sizing vision --preset qwen2.5-vl-7b --images 2 --image-size 1080x1920
      sizing vision --config gemma-3-4b/config.json --images 1
    """
    from sizing.vision import parse_image_size

    text, tower, name, p = _load(preset, config_path)
    height, width = parse_image_size(image_size)
    s = vision_summary(text, tower, name, prompt_tokens, images, height, width, attention)
    if fmt == "json":
        import json

        click.echo(json.dumps(s, indent=2, allow_nan=False))
        return
    from sizing.render import table

    rows = [[k, format_int(v)] for k, v in s["components"].items()]
    rows += [
        ["vision tower", format_int(s["params"]["vision_tower"])],
        ["projector", format_int(s["params"]["projector"])],
    ]
    rows += [["language model (text-only sizing)", format_int(s["params"]["language_model"])]]
    rows += [["total", format_int(s["params"]["total"])], ["active", format_int(s["active_params"])]]
    click.echo(f"{name} ({s['family']}): language model + vision tower + projector")
    click.echo(table(["component", "params"], rows))
    if p is not None:
        click.echo(f"published: {p.published_total:.4g} ({p.source})")
    click.echo(
        f"\n{images} image(s) of {height}x{width}: {s['image_tokens_per_image']} tokens each, "
        f"{s['flops_per_image']:.4g} encoder FLOPs each (bidirectional attention in the tower)"
    )
    click.echo(
        f"prefill of {prompt_tokens} text + {images * s['image_tokens_per_image']} image tokens: "
        f"{s['prefill_flops']:.4g} FLOPs (language model {s['text_forward_flops']:.4g}, attention {attention}; "
        f"images {s['image_encoder_flops']:.4g})"
    )
