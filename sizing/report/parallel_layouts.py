"""`reports/parallel-layouts.md`: published parallel layouts (Llama 3.1 405B, Megatron-LM's GPT-3
175B, BLOOM-176B, OPT-175B) with what sizing.parallel predicts for each (per-GPU memory of the
most-loaded rank, step time, MFU), and a plot of per-GPU memory across layouts, the
"Llama-2-70B on 8 x H100" alternatives included."""

from __future__ import annotations

from sizing.inputs import GIB, Workload, get_preset
from sizing.parallel import (
    PUBLISHED_LAYOUTS,
    ParallelLayout,
    ParallelPlan,
    PublishedLayout,
    StepOptions,
    parallel_plan,
    would_fit,
)
from sizing.report import cells as fmt
from sizing.report.plots import Plot, _render

PAGE = "parallel-layouts.md"
PLOT_PATH = "plots/parallel-memory.png"
QUESTION = ("llama2-70b", "h100-sxm", 8, 4096, 1024)  # model, GPU, GPUs, T, global batch


def published_plan(run: PublishedLayout) -> tuple[ParallelPlan, float, float]:
    """(plan, predicted MFU, predicted HFU) by the per-operation step model, with the run's stack,
    attention kernel and exact (uneven) stages."""
    cfg = get_preset(run.preset).config
    options = StepOptions(stack=run.stack, attention_kernel=run.attention_kernel, dropout=run.dropout)
    work = Workload(run.seq_len, recompute=run.recompute, finetune=run.layout.finetune)
    plan = parallel_plan(cfg, run.layout, work, run.gpu, name=run.name, step_options=options)
    return plan, plan.predicted.mfu, plan.predicted.hfu


EXPOSED_COMM = ("tp", "cp", "ep", "pp", "dp")


def published_rows() -> list[dict]:
    rows = []
    for run in PUBLISHED_LAYOUTS:
        plan, mfu, hfu = published_plan(run)
        seconds = plan.predicted.seconds
        lay = run.layout
        rows.append(
            {
                "run": run.name,
                "GPUs": fmt.count(lay.world),
                "layout": lay.label(),
                "T": fmt.count(run.seq_len),
                "tokens/step": fmt.si(lay.global_batch() * run.seq_len),
                "recompute": run.recompute,
                "GiB/GPU (stage)": f"{fmt.gib(plan.per_gpu_bytes)} ({plan.stage})",
                "fits": "yes" if plan.fits else "no",
                "stack": run.stack,
                "step s": f"{plan.step_seconds:.2f}",
                "exposed comm s": f"{sum(seconds[k] for k in EXPOSED_COMM):.2f}",
                "bubble s": f"{seconds['bubble']:.2f}",
                "predicted MFU": fmt.pct(mfu),
                "predicted HFU": fmt.pct(hfu),
                "reported": run.reported + (" (counts recomputation: compare HFU)" if run.counts_recompute else ""),
            }
        )
    return rows


def question_plans() -> list[tuple[str, ParallelPlan]]:
    """The README's question: full fine-tuning of Llama-2-70B on 8 x H100 under ZeRO-3, and what would fit."""
    model, gpu, gpus, T, batch = QUESTION
    cfg = get_preset(model).config
    zero3_layout = ParallelLayout(dp=gpus, zero=3, micro_batches=batch // gpus)
    zero3 = parallel_plan(cfg, zero3_layout, Workload(T, recompute="full"), gpu, name=model)
    asked = Workload(T, recompute=None, global_batch=batch, gpus=gpus)  # the search tries every recompute mode
    return [("ZeRO-3, recompute full (does not fit)", zero3)] + would_fit(cfg, asked, gpu=gpu, name=model)


def _memory_plot(published: list[tuple[str, ParallelPlan]], question: list[tuple[str, ParallelPlan]]) -> Plot:
    bars = published + [(f"70B/8xH100: {label}", plan) for label, plan in question]
    kinds = {
        "model states": (
            "base_weights_bytes",
            "weights_bytes",
            "gradients_bytes",
            "optimizer_bytes",
            "gathered_unit_bytes",
            "dualpipe_mirror_states_bytes",
        ),
        "activations": (
            "activations_blocks_bytes",
            "activations_embedding_bytes",
            "activations_head_loss_bytes",
            "activations_shared_bytes",
            "dualpipe_mirror_activations_bytes",
        ),
        "transient": ("logits_bytes", "recompute_block_bytes"),
    }
    series = {k: [sum(p.terms[key] for key in keys) for _, p in bars] for k, keys in kinds.items()}
    data = {"x": [label for label, _ in bars], "series": series, "capacity": [p.gpu_memory_bytes for _, p in bars]}
    title = "Per-GPU memory of the most-loaded rank across layouts"
    labels = {"x": "GiB per GPU", "y": ""}

    def draw(ax):
        positions = list(range(len(bars)))
        bottom = [0.0] * len(bars)
        for kind, values in series.items():
            gib = [v / GIB for v in values]
            ax.barh(positions, gib, left=bottom, label=kind)
            bottom = [b + g for b, g in zip(bottom, gib, strict=True)]
        for i, cap in enumerate(data["capacity"]):  # one legend entry for the GPUs' memory
            ax.plot(
                [cap / GIB] * 2,
                [i - 0.4, i + 0.4],
                color="black",
                linewidth=1.5,
                label="GPU memory" if i == 0 else None,
            )
        ax.set_yticks(positions, [label for label, _ in bars], fontsize=6)
        ax.invert_yaxis()
        ax.legend(fontsize=7, loc="lower right")

    return Plot(
        PLOT_PATH,
        title,
        _render(title, labels, data, draw, margins={"left": 0.33}),  # the layouts' names beside the bars
        "Stacked by kind; the black tick (GPU memory in the legend) is the GPU's memory. From sizing.parallel.",
    )


def render_parallel_layouts() -> tuple[str, Plot]:
    published = [(run.name, published_plan(run)[0]) for run in PUBLISHED_LAYOUTS]
    question = question_plans()
    plot = _memory_plot(published, question)
    sources = [
        f"- **{run.name}**: {run.source}. {run.notes} Recompute: {run.recompute_note}." for run in PUBLISHED_LAYOUTS
    ]
    q_rows = [
        {
            "with": label,
            "layout": p.layout.label(),
            "recompute": p.work.recompute,
            "precision": p.work.precision,
            "optimizer": p.work.optimizer,
            "GPUs": fmt.count(p.layout.world),
            "GiB/GPU": fmt.gib(p.per_gpu_bytes),
            "fits": "yes" if p.fits else "no",
            "step s": f"{p.step_seconds:.1f}",
        }
        for label, p in question
    ]
    model, gpu, gpus, T, batch = QUESTION
    text = fmt.document(
        fmt.GENERATED_NOTE,
        "# Parallel layouts: published runs and what sizing.parallel predicts",
        "Per-GPU memory is the most-loaded rank's (its pipeline stage in brackets), term by term in "
        "`sizing parallel`; the step is the per-operation model's (docs/step-time.md) with the run's software "
        "stack and attention kernel and its exact pipeline stages (uneven where the run's were): GEMMs, "
        "attention and memory-bound kernels, the communication left exposed and the pipeline bubble. Predicted "
        "MFU = model FLOPs (forward + backward, causal attention) / (step x bf16 peak); HFU adds the recomputed "
        "forward. No constant is fitted to these runs.",
        fmt.markdown_table(published_rows()),
        "Sources and modelling choices:\n\n" + "\n".join(sources),
        f"## Will {model} train on {gpus} x {gpu}?",
        f"Full fine-tuning (bf16 mixed AdamW, T = {T:,}, {batch:,} sequences per step) needs 16 bytes per parameter "
        f"of model states, 1.12 TB for {model}: no layout of {gpus} GPUs holds it. What would, each the fastest "
        "layout that fits (`sizing parallel --preset llama2-70b --gpu h100 --gpus 8`):",
        fmt.markdown_table(q_rows),
        f"![{plot.title}]({plot.path})",
        plot.note,
    )
    return text, plot
