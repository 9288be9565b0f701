"""`sizing report`: the generated pages of reports/, one module per page (index, sheet,
published_runs, conventions_page, plots), assembled and written atomically by `build`.
pandas, tabulate and matplotlib are imported inside the page builders only."""

from sizing.report.build import build_reports, check_reports, report_steps, write_reports

__all__ = ["build_reports", "check_reports", "report_steps", "write_reports"]


# Names the rest of the code imports from this package, each loaded from its module on first
# use (PEP 562), so that importing the package stays cheap and nothing reaches past it.
_LAZY = {
    "ReportFolderError": "sizing.report.build",
    "plan_report_markdown": "sizing.report.gpu_profile",
    "write_bytes_atomic": "sizing.report.files",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # not cached: a test's stand-in module is seen
