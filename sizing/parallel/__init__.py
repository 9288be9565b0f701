"""Parallel training: layouts (dp/ZeRO/FSDP x tp/SP x pp x cp x ep, offload, LoRA/QLoRA), per-GPU
memory of the most-loaded rank, communication per GPU per step, step time, and the search for
the smallest layout that fits. See docs/parallel.md."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "ALTERNATIVES": "sizing.parallel.search",
    "DEFAULT_BATCH_TOKENS": "sizing.parallel.batches",
    "MFU_MEANING": "sizing.parallel.run",
    "DEFAULT_STACK": "sizing.parallel.stepdata",
    "FINETUNE_MODES": "sizing.parallel.layout",
    "FSDP_MODES": "sizing.parallel.layout",
    "FIRST_SOURCES": "sizing.parallel.published_steps",
    "GPU_TERMS": "sizing.parallel.memory",
    "LAYOUT_ALTERNATIVES": "sizing.parallel.search",
    "LORA_TARGETS": "sizing.parallel.layout",
    "LORA_TRAINED_MODULES": "sizing.parallel.layout",
    "LORA_BASES": "sizing.parallel.layout",
    "PP_SCHEDULES": "sizing.parallel.layout",
    "PUBLISHED_LAYOUTS": "sizing.parallel.published",
    "ParallelLayout": "sizing.parallel.layout",
    "ParallelPlan": "sizing.parallel.plan",
    "PublishedLayout": "sizing.parallel.published",
    "STACKS": "sizing.parallel.stepdata",
    "StepOptions": "sizing.parallel.steptime",
    "Workload": "sizing.inputs.workload",
    "activation_parts": "sizing.parallel.memory",
    "StepBand": "sizing.parallel.band",
    "best_layout_mfu": "sizing.parallel.estimate_mfu",
    "best_layout_plan": "sizing.parallel.estimate_mfu",
    "layout_mfu": "sizing.parallel.estimate_mfu",
    "LayoutMemory": "sizing.parallel.estimate_mfu",
    "calibrate": "sizing.parallel.calibrate_file",
    "use_calibration": "sizing.parallel.calibrate_file",
    "cv_report": "sizing.parallel.band",
    "fitted_overhead_table": "sizing.parallel.overhead",
    "default_global_batch": "sizing.parallel.batches",
    "error_rows": "sizing.parallel.published_steps",
    "gpu_constants": "sizing.parallel.stepdata",
    "in_flight": "sizing.parallel.memory",
    "median_abs_error": "sizing.parallel.published_steps",
    "min_gpus_hint": "sizing.parallel.min_gpus",
    "min_gpus_that_fit": "sizing.parallel.min_gpus",
    "parallel_plan": "sizing.parallel.plan",
    "predict_run": "sizing.parallel.run",
    "ring_all_gather_seconds": "sizing.parallel.comms",
    "ring_all_reduce_seconds": "sizing.parallel.comms",
    "ring_reduce_scatter_seconds": "sizing.parallel.comms",
    "search_layout": "sizing.parallel.search",
    "stage_memory": "sizing.parallel.memory",
    "step_band": "sizing.parallel.band",
    "step_collectives": "sizing.parallel.traffic",
    "would_fit": "sizing.parallel.search",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
