"""The checks of `sizing verify` and the verification page."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "CheckResult": "reference_model.verify.check",
    "check_units": "reference_model.verify.registry",
    "iter_checks": "reference_model.verify.registry",
    "ordered": "reference_model.verify.units",
    "run_checks": "reference_model.verify.registry",
    "verification_report_markdown": "reference_model.verify.report",
    "verify_hybrid_presets": "reference_model.verify.hybrid",
    "verify_parallel": "reference_model.verify.parallel",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
