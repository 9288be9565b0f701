"""A config.json counted by transformers on the meta device, as a sizing.whole.WholeModel: what
`sizing estimate` and `sizing memory` show for a model_type this tool does not model by formula."""

from __future__ import annotations

from hf_meta.build import build_on_meta, transformers_version
from hf_meta.count import count_params
from hf_meta.measure import measure
from sizing import require_int
from sizing.whole import WholeModel

META_LABEL = "counted by transformers on the meta device, not by formula"


def _exactness(version: str, active_known: bool) -> dict[str, str]:
    return {
        "params": f"exact: numel of every parameter transformers {version} builds (tied weights once)"
        + ("" if active_known else "; active unknown: the config names no expert count or top-k"),
        "flops": "measured: FlopCounterMode over the model's own forward on the meta device (masked attention "
        "scores counted whole: the `full` convention; MoE experts as batched matmuls of the k chosen)",
        "kv_cache": "measured: the bytes of the model's own cache object after a prefill of T (bf16)",
        "state": "measured: the conv and recurrent states in that cache object",
        "activations": "estimated: the tensors transformers' own PyTorch code saves for backward (one sequence, "
        "no recompute), less the T x T attention probabilities a flash kernel does not keep and the expert "
        "matrices batched_mm gathers; not given for recurrent layers, whose PyTorch fallback keeps far more",
    }


def _activations(measured, asked: bool) -> int | None:
    """Saved tensors less T x T attention probabilities; None for a model with recurrent layers, whose
    scan transformers runs in a PyTorch fallback that keeps intermediates no training kernel keeps,
    and when not asked for (inference)."""
    if measured.state_bytes or not asked:
        return None
    return measured.activation_bytes - measured.attention_score_bytes


def measure_whole_model(
    data: dict,
    name: str,
    seq_len: int,
    where: str | None = None,
    run_remote_code: bool = False,
    seq_len_source: str = "given",
    activations: bool = True,
) -> WholeModel:
    """Build `data` on the meta device and size it at `seq_len` (forward, decode, cache, activations)."""
    require_int("seq_len", seq_len, 1)
    built = build_on_meta(data, where, run_remote_code)
    counted = count_params(built.model, built.config)
    version = transformers_version()
    notes = [f"{built.model_class} (model_type {built.model_type}), transformers {version}"]
    try:
        measured = measure(built.model, seq_len, with_activations=activations)
    except Exception as exc:  # the model's code needs real data (a data-dependent shape): params stay exact
        why = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
        notes.append(f"its forward does not run on the meta device ({why})")
        measured = None
    if built.remote_code:
        notes.append("built by running the repository's own code (--run-remote-code)")
    active = counted.active
    n_active = counted.total if active is None else active
    if measured is None:
        return _unmeasured(name, counted, n_active, seq_len, seq_len_source, version, notes, built)
    return WholeModel(
        name=name,
        kind="transformers",
        label=META_LABEL,
        params=counted.components,
        active_params=n_active,
        embedding_params=counted.embedding_params,
        seq_len=seq_len,
        attention="full",
        forward_flops=measured.forward_flops,
        decode_flops_per_token=measured.decode_flops,
        kv_cache_bytes=measured.kv_cache_bytes,
        state_bytes=measured.state_bytes,
        activation_bytes=_activations(measured, activations),
        exact=_exactness(version, active is not None),
        seq_len_source=seq_len_source,
        notes=tuple(notes),
        details={
            "model_type": built.model_type,
            "class": built.model_class,
            "transformers": version,
            "routed_expert_params": counted.routed_expert_params,
            "activation_bytes_with_attention_scores": measured.activation_bytes,
        },
    )


def _unmeasured(name, counted, n_active, seq_len, seq_len_source, version, notes, built) -> WholeModel:
    """The parameters, exact, when the forward cannot run on meta: FLOPs estimated as 2 per active
    parameter per token (attention scores not counted), the cache not measured."""
    exact = _exactness(version, counted.active is not None)
    exact["flops"] = "estimated: 2 FLOPs per active parameter per token (the forward could not run; scores uncounted)"
    exact["kv_cache"] = exact["state"] = "not measured: the forward could not run on the meta device"
    exact["activations"] = "not measured"
    return WholeModel(
        name=name,
        kind="transformers",
        label=META_LABEL,
        params=counted.components,
        active_params=n_active,
        embedding_params=counted.embedding_params,
        seq_len=seq_len,
        attention="full",
        forward_flops={"estimated: 2 x active parameters": 2 * n_active * seq_len},
        decode_flops_per_token=2 * n_active,
        kv_cache_bytes=None,
        state_bytes=None,
        activation_bytes=None,
        exact=exact,
        seq_len_source=seq_len_source,
        notes=tuple(notes),
        details={"model_type": built.model_type, "class": built.model_class, "transformers": version},
    )
