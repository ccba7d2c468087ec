"""`ch_search_articles`: the fourth point-in-time tool, over the search index.

Not one of the published three (PROTOCOL §5): agentic systems get it only in the search tool set
(`chpit_assets.pit.schema.SEARCH_TOOL_SPECS`), so the published protocol stays unchanged; its
arguments are validated by the same pydantic model as the tool spec (`pit.schema.SearchArgs`).
A hit mirrors `ch_get_act_article`'s shape where it can (sr_number, abbreviation, version{...}).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from .engine import Hit, SearchIndex

# What a model sees of a hit: no fusion internals (scores, strategy ranks) that would invite it to trust them.
_PUBLIC = ("sr_number", "abbreviation", "article_number", "e_id", "heading", "version", "snippet")


@dataclass(frozen=True)
class SearchResult:
    query: str
    lang: str
    as_of: date
    hits: list[Hit]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "lang": self.lang,
            "as_of": self.as_of.isoformat(),
            "hits": [{k: v for k, v in h.as_dict().items() if k in _PUBLIC} for h in self.hits],
        }
        if not self.hits:  # say why, so an agent rephrases instead of concluding the law is silent
            out["hint"] = (
                f"no article in force on {self.as_of.isoformat()} matched these words in {self.lang!r}; try "
                "other or fewer words, the law's own wording in quotes, an article citation "
                "(e.g. 'Art. 24 DSG') or an SR number"
            )
        return out


class SearchTool:
    """One index handle per language over `search_dir`, reopened when a build swaps a new file in."""

    def __init__(self, search_dir: Path | str):
        self.search_dir = Path(search_dir)
        self._indexes: dict[str, SearchIndex] = {}

    def search(self, query: str, lang: str, as_of: date, sr_number: str | None = None, limit: int = 10) -> SearchResult:
        index = self._indexes.get(lang) or self._indexes.setdefault(lang, SearchIndex(self.search_dir, lang))
        return SearchResult(query, lang, as_of, index.search(query, as_of, sr_number=sr_number, limit=limit))

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()
