"""`sizing presets` and `sizing gpus`: the two lookup tables, listed."""

from __future__ import annotations

import click

from sizing.cli.option_layer import option
from sizing.inputs import DTYPES, GIB, GPUS, PRESETS, format_int, format_si
from sizing.render import csv_text, table


@click.command()
@option("format")
def presets(fmt):
    """List the presets with their parameter counts, context and source."""
    from sizing.formulas import active_params, total_params

    headers = ["name", "family", "params", "active", "context", "tokens", "published", "source"]
    rows = []
    for p in PRESETS.values():
        total, active = total_params(p.config), active_params(p.config)
        published = (
            format_int(p.published_params)
            if p.published_params
            else (f"~{format_si(p.published_params_rounded)}" if p.published_params_rounded else "")
        )
        rows.append(
            [
                p.name,
                p.family,
                format_int(total) if fmt != "table" else format_si(total),
                format_si(active) if active != total else "",
                p.context,
                format_si(p.training_tokens) if p.training_tokens else "",
                published,
                p.source,
            ]
        )
    _echo_rows(
        headers,
        rows,
        fmt,
        json_rows=[
            dict(
                name=p.name,
                family=p.family,
                params=total_params(p.config),
                active=active_params(p.config),
                context=p.context,
                training_tokens=p.training_tokens,
                published_params=p.published_params,
                published_params_rounded=p.published_params_rounded,
                source=p.source,
                hf_id=p.hf_id,
                config=p.config.to_dict(),
            )
            for p in PRESETS.values()
        ],
    )
    if fmt in ("table", "markdown"):
        from sizing.hybrid import HYBRID_PRESETS
        from sizing.vision import VISION_PRESETS

        click.echo(
            f"\nhybrid SSM / linear-attention presets (`sizing hybrid`): {', '.join(p.name for p in HYBRID_PRESETS)}"
        )
        click.echo(f"vision-language presets (`sizing vision`): {', '.join(p.name for p in VISION_PRESETS)}")


@click.command()
@option("format")
def gpus(fmt):
    """List the GPUs: dense peak TFLOP/s per dtype, memory, HBM bandwidth, and the scale-up
    (NVLink) and scale-out (network) bandwidths per GPU per direction."""
    headers = (
        ["name", "gpu"]
        + [f"{d} TFLOP/s" for d in DTYPES]
        + ["memory GiB", "usable GiB", "HBM TB/s", "NVLink GB/s", "network GB/s"]
    )
    rows = [
        [g.key, g.name]
        + [f"{g.peak_tflops[d]:g}" if d in g.peak_tflops else "" for d in DTYPES]
        + [f"{g.memory_gib:g}", f"{g.memory_bytes / GIB:.2f}", f"{g.bandwidth_tbs:g}"]
        + [f"{v:g}" if v is not None else "" for v in (g.nvlink_gbs, g.network_gbs)]
        for g in GPUS.values()
    ]
    _echo_rows(
        headers,
        rows,
        fmt,
        json_rows=[
            dict(
                name=g.key,
                gpu=g.name,
                peak_tflops=g.peak_tflops,
                memory_gib=g.memory_gib,
                memory_bytes=g.memory_bytes,
                bandwidth_tbs=g.bandwidth_tbs,
                nvlink_gbs=g.nvlink_gbs,
                network_gbs=g.network_gbs,
                source=g.source,
                interconnect_source=g.interconnect_source or None,
            )
            for g in GPUS.values()
        ],
    )


def _echo_rows(headers, rows, fmt, json_rows):
    if fmt == "json":
        import json

        click.echo(json.dumps(json_rows, indent=2))
    elif fmt == "csv":
        click.echo(csv_text(headers, rows), nl=False)
    else:
        click.echo(table(headers, rows, fmt))
