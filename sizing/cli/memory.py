"""`sizing memory`: training memory per GPU, or inference memory, and whether it fits.

Exit codes: 0 it fits; 3 it does not fit (the full report is still printed, JSON has
"fits": false and a null max batch); 2 bad input (one 'Error: ...' line on stderr).
"""

from __future__ import annotations

import click

from .common import FORMATS, UserError, model_options, resolve_model

EXIT_DOES_NOT_FIT = 3


class _Choice(click.ParamType):
    """A choice whose bad value is a one-line UserError (exit 2), not click's usage block."""

    def __init__(self, option: str, choices, aliases: dict | None = None):
        self.option, self.choices, self.aliases = option, tuple(choices), aliases or {}
        self.name = "|".join(map(str, self.choices))

    def get_metavar(self, param, ctx=None) -> str:  # click >= 8.2 passes ctx
        return "[" + self.name + "]"

    def convert(self, value, param, ctx):
        text = str(value).strip().lower()
        text = self.aliases.get(text, text)
        for choice in self.choices:
            if text == str(choice):
                return choice
        raise UserError(f"{self.option} ({value}) must be one of: {', '.join(map(str, self.choices))}")


class _Count(click.ParamType):
    """An integer >= minimum; anything else is a one-line UserError (exit 2)."""

    name = "integer"

    def __init__(self, option: str, minimum: int = 1):
        self.option, self.minimum = option, minimum

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip().replace("_", ""))
            except ValueError:
                raise UserError(f"{self.option} ({value}) must be an integer >= {self.minimum}") from None
        if number < self.minimum:
            what = "a positive integer" if self.minimum == 1 else f"an integer >= {self.minimum}"
            raise UserError(f"{self.option} ({value}) must be {what}")
        return number


def _options():
    from ..flops import RECOMPUTE_MODES
    from ..memory import ATTENTION_ALIASES, ATTENTION_IMPLS, DTYPE_BITS, OPTIMIZERS, PRECISIONS, ZERO_STAGES

    return dict(precision=_Choice("--precision", PRECISIONS, {"mixed": "bf16-mixed"}),
                optimizer=_Choice("--optimizer", OPTIMIZERS, {"adam": "adamw"}),
                zero=_Choice("--zero", ZERO_STAGES), recompute=_Choice("--recompute", RECOMPUTE_MODES),
                attention=_Choice("--attention-impl", ATTENTION_IMPLS, ATTENTION_ALIASES),
                weight_dtype=_Choice("--weight-dtype", DTYPE_BITS), kv_dtype=_Choice("--kv-dtype", DTYPE_BITS))


_T = _options()


@click.command()
@model_options
@click.option("--seq-len", "-T", type=_Count("--seq-len"), help="Tokens per sequence (default: the preset's context).")
@click.option("--micro-batch", "-b", type=_Count("--micro-batch"), help="Sequences per GPU per step.  [default: 1]")
@click.option("--precision", type=_T["precision"], default="bf16-mixed", show_default=True,
              help="fp32; bf16-mixed / fp16-mixed (16-bit weights and grads, fp32 master + states: 16 B/param "
                   "with AdamW); bf16 (pure, no master copy).")
@click.option("--optimizer", type=_T["optimizer"], default="adamw", show_default=True,
              help="adamw (m, v); sgd (momentum); adam8bit (bitsandbytes block-wise 8-bit m, v).")
@click.option("--zero", type=_T["zero"], default=0, show_default=True,
              help="ZeRO stage over --dp: 1 shards optimizer states, 2 + gradients, 3 + weights (FSDP FULL_SHARD).")
@click.option("--dp", type=_Count("--dp"), default=1, show_default=True,
              help="Data-parallel degree (ZeRO shards over it).")
@click.option("--recompute", type=_T["recompute"], default="none", show_default=True,
              help="Activation recomputation: selective (attention core) or full (each block keeps its input).")
@click.option("--attention-impl", "attention_impl", type=_T["attention"], default="flash", show_default=True,
              help="math materialises the T x T scores and probabilities; flash (= sdpa) is a fused kernel.")
@click.option("--gpu", default="a100-80gb", show_default=True, help="GPU name (see `sizing gpus`).")
@click.option("--inference", is_flag=True, help="Inference memory (weights + KV cache) instead of training.")
@click.option("--context", "-C", type=_Count("--context"), help="Inference: tokens in the KV cache per sequence "
              "(default: --seq-len or the preset's context).")
@click.option("--batch", type=_Count("--batch"), help="Inference: sequences decoded together.  [default: 1]")
@click.option("--weight-dtype", type=_T["weight_dtype"], help="Inference: weight dtype.  [default: bf16]")
@click.option("--kv-dtype", type=_T["kv_dtype"], help="Inference: KV cache dtype.  [default: bf16]")
@click.option("--format", "fmt", type=_Choice("--format", FORMATS), default="table", show_default=True)
def memory(preset, config_path, overrides, seq_len, micro_batch, precision, optimizer, zero, dp, recompute,
           attention_impl, gpu, inference, context, batch, weight_dtype, kv_dtype, fmt):
    """Training memory per GPU (or inference memory) and the largest batch that fits.

    Training: weights + gradients + optimizer states (sharded by ZeRO over --dp) +
    activations saved for backward + the logits' working set. Inference: weights + KV cache
    (2 x layers x kv heads x head_dim x bytes x context x batch; a sliding window caps the
    context). Exit code 0 when it fits, 3 when it does not (the report says what would),
    2 on bad input.

    \b
    Example:
      sizing memory --preset llama2-7b --gpu h100 --zero 3 --dp 8 --micro-batch 4
      sizing memory --preset llama2-7b --recompute full --attention-impl math --format json
      sizing memory --preset llama2-70b --inference --context 4096 --batch 8 --weight-dtype int4
    """
    from ..hardware import get_gpu
    from ..memory import inference_memory, training_memory

    model = resolve_model(preset, config_path, overrides)
    if model.preset is None and seq_len is None and (context is None or not inference):
        needed = "--context" if inference else "--seq-len"
        raise UserError(f"{needed} is needed for a model that is not a preset (e.g. {needed} 4096)")
    try:
        gpu_key = get_gpu(gpu).key
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    default_len = seq_len or (model.preset.context if model.preset else None)
    if inference:
        given = [name for name, value in (("--micro-batch", micro_batch), ("--zero", zero or None),
                                          ("--dp", dp if dp != 1 else None)) if value is not None]
        if given:
            raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to training; "
                            "with --inference use --batch and --context")
        result = inference_memory(model.config, context or default_len, batch or 1, weight_dtype or "bf16",
                                  kv_dtype or "bf16", gpu_key, name=model.name)
    else:
        given = [name for name, value in (("--context", context), ("--batch", batch), ("--weight-dtype", weight_dtype),
                                          ("--kv-dtype", kv_dtype)) if value is not None]
        if given:
            raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to inference: add --inference "
                            "(training uses --micro-batch and --seq-len)")
        if zero and dp == 1:
            raise UserError(f"--zero {zero} shards over --dp ranks; give --dp 2 or more (e.g. --zero {zero} --dp 8)")
        result = training_memory(model.config, default_len, micro_batch or 1, precision, optimizer, zero, dp, recompute,
                                 attention_impl, gpu_key, name=model.name)
    click.echo(result.render(fmt, details=True).rstrip("\n"))
    if not result.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)
