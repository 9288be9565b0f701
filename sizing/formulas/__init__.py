"""Formulas: parameters and FLOPs per component, the named conventions, scaling laws."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "ATTENTION_NOTES": "sizing.formulas.conventions",
    "BACKWARD_PER_FORWARD": "sizing.formulas.flops",
    "COMPONENTS": "sizing.formulas.conventions",
    "CONVENTIONS": "sizing.formulas.conventions",
    "CONVENTION_TABLE": "sizing.formulas.conventions",
    "FLOP_TERMS": "sizing.formulas.flops",
    "HOFFMANN_APPROACH1": "sizing.formulas.scaling",
    "HOFFMANN_TABLE3": "sizing.formulas.scaling",
    "InferenceAware": "sizing.formulas.scaling",
    "KAPLAN_FLOPS_PER_PARAM": "sizing.formulas.flops",
    "LAWS": "sizing.formulas.scaling",
    "LOSS_LAWS": "sizing.formulas.scaling",
    "PARAM_GROUPS": "sizing.formulas.params",
    "SARDANA_SOURCE": "sizing.formulas.scaling",
    "SELECTIVE_RECOMPUTE_KEYS": "sizing.formulas.flops",
    "active_params": "sizing.formulas.params",
    "attended_pairs": "sizing.formulas.flops",
    "decode_flops_per_token": "sizing.formulas.flops",
    "flop_breakdown": "sizing.formulas.flops",
    "flop_components": "sizing.formulas.flops",
    "inference_aware": "sizing.formulas.scaling",
    "kaplan_6n_per_token": "sizing.formulas.flops",
    "lm_head_flops": "sizing.formulas.flops",
    "megatron_convention": "sizing.formulas.conventions",
    "mla_absorbed_decode_flops_per_token": "sizing.formulas.flops",
    "model_flops_per_token": "sizing.formulas.conventions",
    "model_training_flops": "sizing.formulas.conventions",
    "mtp_summary": "sizing.formulas.mtp",
    "ours_convention": "sizing.formulas.conventions",
    "palm_convention": "sizing.formulas.conventions",
    "palm_flops_per_token": "sizing.formulas.conventions",
    "param_components": "sizing.formulas.params",
    "param_groups": "sizing.formulas.params",
    "per_token": "sizing.formulas.flops",
    "tokens_for_budget": "sizing.formulas.scaling",
    "total_params": "sizing.formulas.params",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
