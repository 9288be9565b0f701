"""Rendering of result objects as table, markdown, JSON or CSV text. Results never render
themselves: the modules here turn them into text."""

# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "CAPACITY_HEADERS": "sizing.render.capacity",
    "answer_line": "sizing.render.capacity",
    "capacity_rows": "sizing.render.capacity",
    "csv_text": "sizing.render.tables",
    "format_seconds": "sizing.render.serve",
    "heading": "sizing.render.tables",
    "import_tabulate": "sizing.render.tables",
    "render_capacity": "sizing.render.capacity",
    "render_disaggregated": "sizing.render.disagg",
    "render_engine": "sizing.render.engine",
    "render_estimate": "sizing.render.estimate",
    "render_layouts": "sizing.render.moe_layout",
    "render_memory": "sizing.render.memory",
    "render_no_fit": "sizing.render.parallel",
    "render_other_serve": "sizing.render.serve_other",
    "render_parallel_plan": "sizing.render.parallel",
    "render_plan": "sizing.render.plan",
    "render_rows": "sizing.render.rows",
    "render_serve": "sizing.render.serve",
    "render_speculation": "sizing.render.speculative",
    "render_whole_estimate": "sizing.render.whole",
    "render_whole_memory": "sizing.render.whole",
    "render_whole_parallel": "sizing.render.whole",
    "table": "sizing.render.tables",
    "with_prefix_cache": "sizing.render.prefix",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
