"""The channel report: what a channel shared, who engaged and how PaperPing's posts fared over a period, loaded
for one channel (``data``, its queries in ``socialrag.storage.reports``), drawn (``charts``) and written as one
self-contained page with its PNGs (``page``); the monthly report in the channel (``monthly``);
the group's top list of a period (``top``).

The Slack side and the CLI use the names below; the modules behind them are free to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialrag.packages import entry_points

if TYPE_CHECKING:
    from socialrag.report.data import load_report_data
    from socialrag.report.monthly import UploadReport, month_start, post_due_reports, post_month_report
    from socialrag.report.page import month_summary, safe_filename, write_report
    from socialrag.report.top import PERIODS, TopList, TopPaper, load_top_list

__getattr__, __all__ = entry_points(__name__, __file__)
