"""One declaration per report column (issue 25 item 6): a header and the function that renders its
cell from one row of the report's data. Markdown, JSON (the headers beside the rows) and HTML are
all rendered from the same `Table`, so a column cannot be added to one and forgotten in another,
and no two lists have to line up by position."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[dict], object]


@dataclass(frozen=True)
class Table:
    """A report section: its title, where its rows are in the report (`key`, or `rows` when they
    need reshaping), its columns, a note printed under it, and what to say when it has no rows
    (empty: the section is left out)."""

    key: str
    title: str
    columns: tuple[Column, ...]
    note: str = ""
    empty: str = ""
    rows: Callable[[dict], list[dict]] | None = None

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    def rows_of(self, report: dict) -> list[dict]:
        return self.rows(report) if self.rows is not None else list(report.get(self.key) or [])

    def body(self, rows: Iterable[dict]) -> list[list[str]]:
        return [[str(c.cell(row)) for c in self.columns] for row in rows]


def headers(columns: Sequence[Column]) -> tuple[str, ...]:
    return tuple(c.header for c in columns)


def fmt(value: float | None) -> str:
    """A percentage .1f; an empty denominator is "–", never 0."""
    return "–" if value is None else f"{value:.1f}"


def fmt_ci(pct: float | None, ci: dict | None) -> str:
    """`66.7 [30.0–90.3]`: the share and its 95% interval, both .1f."""
    if pct is None or ci is None or ci.get("low") is None:
        return fmt(pct)
    return f"{fmt(pct)} [{fmt(ci['low'])}–{fmt(ci['high'])}]"


def share_column(header: str, name: str) -> Column:
    """A share with its interval: the row's `{name}_pct` and `ci[name]`."""
    return Column(header, lambda r: fmt_ci(r[f"{name}_pct"], r["ci"].get(name)))


def share_n_column(header: str, name: str, n_key: str) -> Column:
    """A share of a subset, its interval and the subset's size: `66.7 [30.0–90.3] (n=3)`."""
    return Column(header, lambda r: f"{fmt_ci(r[f'{name}_pct'], r['ci'].get(name))} (n={r[n_key]})")


def key_column(header: str, key: str | None = None) -> Column:
    return Column(header, lambda r: r[key or header])
