"""Planning: compute-optimal sizing, compare, sweep."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "HEADLINE_COLUMNS": "sizing.plan.sweeps",
    "MEMORY_COLUMNS": "sizing.plan.sweeps",
    "Plan": "sizing.plan.compute_optimal",
    "compare": "sizing.plan.comparison",
    "grid_size": "sizing.plan.sweeps",
    "plan": "sizing.plan.compute_optimal",
    "sweep": "sizing.plan.sweeps",
    "sweep_rows": "sizing.plan.sweeps",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
