"""Megatron-LM's training arguments, by their dest names (megatron/training/arguments.py:
`--tensor-model-parallel-size` is `tensor_model_parallel_size`), as this tool's options. One
table serves a command line (`pretrain_gpt.py --tensor-model-parallel-size 8 ...`), a YAML of the
same names (Megatron-LM's --yaml-cfg, Megatron-Bridge's recipe overrides such as
`model.tensor_model_parallel_size`) and NeMo 2's Megatron strategy (`trainer.strategy.*`), where
the last key of a dotted name is the argument."""

from __future__ import annotations

from typing import Any

from sizing.frameworks.settings import Reading, boolean, integer
from sizing.validate import SizingError

# dest -> the option it sets (a converter for the value, or a constant for a switch)
LAYOUT_ARGS: dict[str, str] = {
    "tensor_model_parallel_size": "tp",
    "pipeline_model_parallel_size": "pp",
    "context_parallel_size": "cp",
    "expert_model_parallel_size": "ep",
    "expert_tensor_parallel_size": "etp",
    "data_parallel_size": "dp",
    "virtual_pipeline_model_parallel_size": "v",
    "micro_batch_size": "micro_batch",
    "global_batch_size": "global_batch",
    "seq_length": "seq_len",
    "encoder_seq_length": "seq_len",
}
# Architecture arguments -> ModelConfig fields (a model stated shape by shape).
ARCHITECTURE_ARGS: dict[str, str] = {
    "num_layers": "n_layers",
    "hidden_size": "d_model",
    "ffn_hidden_size": "d_ff",
    "num_attention_heads": "n_heads",
    "num_query_groups": "n_kv_heads",
    "vocab_size": "vocab_size",
    "kv_channels": "head_dim",
    "num_experts": "n_experts",
    "moe_router_topk": "top_k",
    "moe_ffn_hidden_size": "expert_d_ff",
}
# Switches that say how the architecture is built (arguments.py: --swiglu, --normalization RMSNorm, ...).
SHAPE_SWITCHES = ("swiglu", "normalization", "position_embedding_type", "untie_embeddings_and_output_weights",
                  "disable_bias_linear", "group_query_attention", "max_position_embeddings",
                  "rotary_base")  # fmt: skip


def read_megatron_args(r: Reading, args: dict[str, Any]) -> None:
    """Fill `r` from Megatron arguments (dest -> value; a bare flag is True)."""
    for dest, key in LAYOUT_ARGS.items():
        if dest in args and args[dest] is not None:
            r.take(key, dest, integer)
    if _on(r, "sequence_parallel"):
        r.set("sp", True, "sequence_parallel")
    _precision(r)
    _recompute(r)
    _optimizer_and_grads(r)
    if _on(r, "use_torch_fsdp2") or _on(r, "use_megatron_fsdp"):
        r.set("fsdp", "full", *[n for n in ("use_torch_fsdp2", "use_megatron_fsdp") if r.has(n)])
    if _on(r, "cross_entropy_loss_fusion"):
        r.set("cross_entropy", "fused", "cross_entropy_loss_fusion")
    iters = r.first("train_iters")
    if iters and r.has("global_batch_size") and r.has("seq_length"):
        tokens = integer(iters[1]) * integer(r.get("global_batch_size")) * integer(r.get("seq_length"))
        r.set("tokens", tokens, "train_iters", "global_batch_size", "seq_length")
    if r.has("train_samples") and r.has("seq_length"):
        r.set("tokens", integer(r.get("train_samples")) * integer(r.get("seq_length")), "train_samples", "seq_length")
    r.set("stack", "megatron-core", *[n for n in ("use_mcore_models", "transformer_impl") if r.has(n)])


def _on(r: Reading, dest: str) -> bool:
    if not r.has(dest):
        return False
    try:
        return boolean(r.get(dest))
    except ValueError as exc:
        raise r.fail(dest, str(exc)) from None


def _precision(r: Reading) -> None:
    fp8 = r.first("fp8_format", "fp8")
    if fp8 and fp8[1] not in (False, None, "null", "None"):
        r.set("precision", "fp8", fp8[0])
        recipe = r.first("fp8_recipe")
        if recipe:
            names = {"delayed": "tensorwise", "tensorwise": "tensorwise", "blockwise": "blockwise", "mxfp8": "mxfp8"}
            if str(recipe[1]) not in names:
                raise r.fail("fp8_recipe", f"must be one of {', '.join(names)}")
            r.set("fp8_recipe", names[str(recipe[1])], "fp8_recipe")
        if r.has("fp8_param_gather"):
            r.set("fp8_param_gather", _on(r, "fp8_param_gather"), "fp8_param_gather")
    elif _on(r, "bf16"):
        r.set("precision", "bf16-mixed", "bf16")
    elif _on(r, "fp16"):
        r.set("precision", "fp16-mixed", "fp16")


def _recompute(r: Reading) -> None:
    granularity = r.first("recompute_granularity")
    if granularity and granularity[1] not in (None, "null", "None"):
        if granularity[1] not in ("full", "selective"):
            raise r.fail("recompute_granularity", "must be full or selective")
        r.set("recompute", granularity[1], "recompute_granularity", *[n for n in ("recompute_method",) if r.has(n)])
    elif _on(r, "recompute_activations"):
        r.set("recompute", "selective", "recompute_activations")


def _optimizer_and_grads(r: Reading) -> None:
    optimizer = r.first("optimizer")
    if optimizer:
        names = {"adam": "adamw", "adamw": "adamw", "sgd": "sgd"}
        if str(optimizer[1]).lower() not in names:
            raise r.fail("optimizer", f"must be one of {', '.join(names)} (Megatron's --optimizer)")
        r.set("optimizer", names[str(optimizer[1]).lower()], "optimizer")
    if _on(r, "use_distributed_optimizer"):
        r.set("zero", 1, "use_distributed_optimizer")
    if _on(r, "grad_reduce_in_bf16"):
        r.set("grad_reduce", "bf16", "grad_reduce_in_bf16")
    elif r.has("grad_reduce_in_fp32"):
        r.set("grad_reduce", "fp32" if _on(r, "grad_reduce_in_fp32") else "bf16", "grad_reduce_in_fp32")
    elif _on(r, "accumulate_allreduce_grads_in_fp32"):
        r.set("grad_reduce", "fp32", "accumulate_allreduce_grads_in_fp32")


def megatron_architecture(r: Reading) -> dict[str, Any] | None:
    """ModelConfig fields from the architecture arguments, or None when the file states none."""
    if not r.has("num_layers") or not r.has("hidden_size"):
        return None
    fields: dict[str, Any] = {}
    for dest, name in ARCHITECTURE_ARGS.items():
        if r.has(dest):
            try:
                fields[name] = integer(r.get(dest))
            except ValueError as exc:
                raise r.fail(dest, str(exc)) from None
    if "d_ff" not in fields:
        fields["d_ff"] = 4 * fields["d_model"]
    if not _on(r, "group_query_attention"):
        fields.pop("n_kv_heads", None)
    if _on(r, "swiglu"):
        fields["mlp"] = "swiglu"
    if str(r.get("normalization", "LayerNorm")).lower() == "rmsnorm":
        fields["norm"] = "rmsnorm"
    if str(r.get("position_embedding_type", "learned_absolute")) == "rope":
        fields["position"] = "rope"
    else:
        fields["max_positions"] = integer(r.get("max_position_embeddings", 0) or 0)
    fields["tied_embeddings"] = not _on(r, "untie_embeddings_and_output_weights")
    if not _on(r, "disable_bias_linear"):
        fields.update(qkv_bias=True, attn_out_bias=True, mlp_bias=True)
    r.used.update(r.name(n) for n in SHAPE_SWITCHES if r.has(n))
    if fields.get("n_experts") and not fields.get("top_k"):
        raise SizingError(f"{r.where}: num_experts needs moe_router_topk")
    return fields


def parse_argv(words: list[str], where: str) -> tuple[list[str], dict[str, Any]]:
    """(launcher words before the script, {dest: value}) of `torchrun ... pretrain_gpt.py --a 1 --b`.
    A flag followed by another flag (or nothing) is a switch (True)."""
    start = next((i for i, w in enumerate(words) if w.endswith(".py")), -1)
    launcher, rest = words[: start + 1], words[start + 1 :]
    args: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        word = rest[i]
        if not word.startswith("--"):
            raise SizingError(f"{where}: {word!r} is not an --argument (Megatron arguments are --name value)")
        name, eq, value = word[2:].partition("=")
        dest = name.replace("-", "_")
        if eq:
            args[dest] = value
        elif i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            args[dest] = rest[i + 1]
            i += 1
        else:
            args[dest] = True
        i += 1
    return launcher, args


def launcher_gpus(r: Reading, launcher: list[str]) -> None:
    """torchrun's --nproc-per-node x --nnodes as the GPU count."""
    opts = _launcher_opts(launcher)
    per_node, nodes = opts.get("nproc_per_node"), opts.get("nnodes", "1")
    if per_node is None:
        return
    try:
        gpus = integer(per_node) * integer(str(nodes).split(":")[-1])
    except ValueError:
        raise SizingError(
            f"{r.where}: torchrun --nproc-per-node {per_node} --nnodes {nodes} is not a GPU count"
        ) from None
    r.fields["torchrun"] = " ".join(launcher)
    r.set("gpus", gpus, "torchrun")


def _launcher_opts(launcher: list[str]) -> dict[str, str]:
    out, i = {}, 0
    while i < len(launcher):
        word = launcher[i]
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if not eq and i + 1 < len(launcher) and not launcher[i + 1].startswith("-"):
                value, i = launcher[i + 1], i + 1
            out[name.replace("-", "_")] = value
        i += 1
    return out
