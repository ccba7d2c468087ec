"""Markdown tables, as the report, the dataset card and the Dagster metadata previews show them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def _cell(value: object) -> str:
    # A "|" or a line break inside a cell would end the cell or the row.
    return str(value).replace("|", "\\|").replace("\n", " ⏎ ")


def table_lines(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A GitHub-flavoured markdown table, one string per line."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_cell(v) for v in row) + " |" for row in rows),
    ]


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    return "\n".join(table_lines(header, rows))
