"""A small constructed corpus written straight into the store tables, and the builder run over it."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from chpit_assets.bench.changes import build_changes
from chpit_assets.bench.eligibility import evaluate, write_eligible
from chpit_assets.bench.items import BuildSettings, build_items, write_items
from chpit_assets.corpus.schema import act_id_for, version_id_for
from chpit_assets.corpus.store import Store

FILLER = (
    "Die zuständige Behörde prüft das Gesuch innert angemessener Frist und teilt ihren Entscheid "
    "der gesuchstellenden Person schriftlich mit; sie begründet ihn, soweit er nicht vollständig "
    "dem Gesuch entspricht."
)


def long_text(*paragraphs: str) -> str:
    """An article text over 200 characters: a fixed first paragraph, then the given ones, numbered."""
    return "\n".join(f"{n} {p}" for n, p in enumerate((FILLER, *paragraphs), start=1))


class Corpus:
    """Rows for ch_act, ch_act_alias, ch_act_version, ch_act_article, flushed with Store.replace."""

    def __init__(self, store: Store):
        self.store = store
        self.acts: list[dict] = []
        self.aliases: list[dict] = []
        self.versions: list[dict] = []
        self.articles: list[dict] = []

    def act(
        self,
        key: str,
        sr: str = "235.1",
        abbr: str | None = "DSG",
        status: int = 0,
        jurisdiction: str = "CH",
        aliases: dict[str, list[tuple[str, str]]] | None = None,
    ) -> int:
        eli = f"https://fedlex.data.admin.ch/eli/cc/test/{key}"
        act_id = act_id_for(eli)
        self.acts.append(
            {
                "act_id": act_id,
                "sr_number": sr,
                "eli": eli,
                "jurisdiction": jurisdiction,
                "abbreviation": abbr,
                "enforcement_status": status,
            }
        )
        for lang, rows in (aliases or {}).items():
            for a, source in rows:
                self.aliases.append({"lang": lang, "sr_number": sr, "abbr": a, "source": source, "act_id": act_id})
        return act_id

    def edition(
        self,
        act_id: int,
        lang: str,
        start: str,
        end: str | None,
        articles: dict[str, tuple[str | None, str] | list[tuple[str | None, str]]],
        source: str = "fedlex",
        stage: str = "parsed",
        vouched: bool = False,
    ) -> int:
        """`vouched`: with the file sha256, parser version and content digest ingest records, which let a rebuild keep
        what it derived from the edition (without them, everything is derived again every build).
        An e_id mapped to a list is repeated in the edition (occurrence 1, 2, ... in list order)."""
        eli = f"{next(a['eli'] for a in self.acts if a['act_id'] == act_id)}/{start.replace('-', '')}"
        vid = version_id_for(eli, lang)
        self.versions.append(
            {
                "version_id": vid,
                "act_id": act_id,
                "lang": lang,
                "date_applicability": date.fromisoformat(start),
                "date_end_applicability": date.fromisoformat(end) if end else None,
                "eli": eli,
                "source": source,
                "stage": stage,
                "sha256": hashlib.sha256(eli.encode()).hexdigest() if vouched else None,
                "parser_version": "test" if vouched else None,
                "content_sha256": hashlib.sha256(f"content {eli}".encode()).hexdigest() if vouched else None,
            }
        )
        for e_id, rows in articles.items():
            for occurrence, (number, text) in enumerate(rows if isinstance(rows, list) else [rows], start=1):
                self.articles.append(
                    {"version_id": vid, "e_id": e_id, "occurrence": occurrence, "article_number": number, "text": text}
                )
        return vid

    def flush(self) -> None:
        schemas = {
            "ch_act": {
                "act_id": pl.Int64,
                "sr_number": pl.String,
                "eli": pl.String,
                "jurisdiction": pl.String,
                "abbreviation": pl.String,
                "enforcement_status": pl.Int32,
            },
            "ch_act_alias": {
                "lang": pl.String,
                "sr_number": pl.String,
                "abbr": pl.String,
                "source": pl.String,
                "act_id": pl.Int64,
            },
            "ch_act_version": {
                "version_id": pl.Int64,
                "act_id": pl.Int64,
                "lang": pl.String,
                "date_applicability": pl.Date,
                "date_end_applicability": pl.Date,
                "eli": pl.String,
                "source": pl.String,
                "stage": pl.String,
                "sha256": pl.String,
                "parser_version": pl.String,
                "content_sha256": pl.String,
            },
            "ch_act_article": {
                "version_id": pl.Int64,
                "e_id": pl.String,
                "occurrence": pl.Int32,
                "article_number": pl.String,
                "text": pl.String,
            },
        }
        rows = {
            "ch_act": self.acts,
            "ch_act_alias": self.aliases,
            "ch_act_version": self.versions,
            "ch_act_article": self.articles,
        }
        self.store.replace([(t, "true", [], pl.DataFrame(rows[t], schema=s)) for t, s in schemas.items()])


def run_builder(
    store: Store,
    lang: str,
    build_dir: Path,
    settings: BuildSettings = BuildSettings(),
    frozen: list[dict] | None = None,
    sources=("fedlex",),
):
    """act_changes -> eligible_changes -> bench_items for one language, as the assets run them."""
    build_changes(store, lang)
    eligibility = evaluate(store, lang, sources)
    write_eligible(store, eligibility)
    result = build_items(store, lang, settings, frozen or [])
    write_items(store, build_dir, result)
    return eligibility, result


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "chpit.duckdb")


@pytest.fixture
def corpus(store) -> Corpus:
    return Corpus(store)
