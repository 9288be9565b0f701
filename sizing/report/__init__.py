"""`sizing report`: the generated pages of reports/, one module per page (index, sheet,
published_runs, conventions_page, plots), assembled and written atomically by `build`.
pandas, tabulate and matplotlib are imported inside the page builders only."""

from .build import build_reports, check_reports, write_reports

__all__ = ["build_reports", "check_reports", "write_reports"]
