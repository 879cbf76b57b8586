"""``wavelab report``: one self-contained HTML page of a sweep, a run or a
reproduction.

* :mod:`~wavelab.report.page`: the page, its kinds, and writing it;
* :mod:`~wavelab.report.time_series`: a run's time series and a table, as the
  page reads them;
* ``assets/``: the page's own script and style.
"""

from wavelab.report.page import ReportError, build_page, render, write_report
from wavelab.report.time_series import run_data, table_data

__all__ = ["ReportError", "build_page", "render", "run_data", "table_data", "write_report"]
