"""Training cost: compute, GPU-hours, days, dollars, energy and CO2."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "DEFAULT_KG_CO2_PER_KWH": "sizing.training.energy",
    "DEFAULT_PUE": "sizing.training.energy",
    "HOURS_PER_DAY": "sizing.training.cost",
    "SECONDS_PER_HOUR": "sizing.training.cost",
    "TrainingRun": "sizing.training.cost",
    "check_hardware_options": "sizing.training.cost",
    "cost_usd": "sizing.training.cost",
    "gpu_hours": "sizing.training.cost",
    "implied_mfu": "sizing.training.cost",
    "run_energy": "sizing.training.energy",
    "training_flops": "sizing.training.cost",
    "wall_clock_days": "sizing.training.cost",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
