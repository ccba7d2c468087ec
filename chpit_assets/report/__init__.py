"""The CH-PiT report (R4): numbers in `tables`, markdown/JSON/HTML in `render` from the sections
declared in `layout` (columns in `columns`), the published report files (PROTOCOL §5, §8) in
`published`, item stamping (§9) in `stamp`; intervals and paired tests in `stats`, paired
comparisons (and `compare A B`) in `compare`, breakdowns and the cutoff split in `breakdowns`,
repeats in `repeats`, the results folder read by `collect`."""

from .published import report_all, results_tables, summary, tools_report, tools_table, write_published
from .render import to_html, to_json, to_markdown, write_report
from .stamp import StampError, stamp_recite
from .tables import HEADLINE_COLUMNS, build_report

__all__ = [
    "HEADLINE_COLUMNS",
    "StampError",
    "build_report",
    "report_all",
    "results_tables",
    "stamp_recite",
    "summary",
    "to_html",
    "to_json",
    "to_markdown",
    "tools_report",
    "tools_table",
    "write_published",
    "write_report",
]
