"""The CH-PiT report (R4): numbers in `tables`, markdown/JSON/HTML in `render`, item stamping in `stamp`."""

from .render import to_html, to_json, to_markdown, write_report
from .stamp import stamp_recite
from .tables import HEADLINE_COLUMNS, build_report

__all__ = ["HEADLINE_COLUMNS", "build_report", "stamp_recite", "to_html", "to_json", "to_markdown", "write_report"]
