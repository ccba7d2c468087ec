"""`ch_search_articles`: the fourth point-in-time tool, over the search index.

An extra tool beside the published three (PROTOCOL §5): agentic systems get it only in the
search tool set, so the published three-tool protocol stays unchanged. Its response mirrors
`ch_get_act_article`'s shape where it can (sr_number, abbreviation, version{...}, article{...}).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from .engine import SearchIndex
from .index import SearchIndexError

NAME = "ch_search_articles"
LANGS = ("de", "fr", "it")
MAX_LIMIT = 50
MAX_QUERY_CHARS = 2000

SPEC = {
    "type": "function",
    "function": {
        "name": NAME,
        "description": (
            "Search the articles of Swiss federal acts (Fedlex) in the editions in force on a date. Returns "
            "ranked articles, each with sr_number, abbreviation, article_number, the edition's validity interval "
            "and a snippet; without as_of, the editions in force today. Response: {query, lang, as_of, hits: "
            "[{sr_number, abbreviation, article_number, heading, version{version_id, date_applicability, "
            "date_end_applicability}, snippet}]}."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words, a phrase or a citation such as 'Art. 24 DSG'",
                          "maxLength": MAX_QUERY_CHARS},
                "lang": {"type": "string", "enum": list(LANGS), "description": "Language of the editions",
                         "default": "de"},
                "as_of": {"type": "string", "description": "Date (YYYY-MM-DD) the editions must be in force on; "
                                                           "default: today"},
                "sr_number": {"type": "string", "description": "Restrict to one act, e.g. '220'"},
                "limit": {"type": "number", "description": f"Maximum hits (1 to {MAX_LIMIT})", "default": 10},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


class SearchTool:
    """One index handle per language over `search_dir`; `today` is what as_of defaults to."""

    def __init__(self, search_dir: Path | str, today: date):
        self.search_dir = Path(search_dir)
        self.today = today
        self._indexes: dict[str, SearchIndex] = {}

    def __call__(self, query: str, lang: str = "de", as_of: str | None = None, sr_number: str | None = None,
                 limit: int = 10) -> dict:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query: a non-empty string is required")
        if len(query) > MAX_QUERY_CHARS:
            raise ValueError(f"query: at most {MAX_QUERY_CHARS} characters (got {len(query)})")
        if lang not in LANGS:
            raise ValueError(f"lang: one of {', '.join(LANGS)} (got {lang!r:.40})")
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit != int(limit) \
                or not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit: a whole number from 1 to {MAX_LIMIT} (got {str(limit):.40})")
        try:
            day = date.fromisoformat(as_of) if as_of is not None else self.today
        except (TypeError, ValueError):
            raise ValueError(f"as_of: a date YYYY-MM-DD (got {str(as_of):.40})") from None
        index = self._indexes.get(lang) or self._indexes.setdefault(lang, SearchIndex(self.search_dir, lang))
        try:
            hits = index.search(query, day, sr_number=sr_number, limit=int(limit))
        except SearchIndexError as exc:
            return {"error": "no_index", "detail": str(exc)}
        return {
            "query": query,
            "lang": lang,
            "as_of": day.isoformat(),
            "hits": [_public(h.as_dict()) for h in hits],
        }

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()


_PUBLIC = ("sr_number", "abbreviation", "article_number", "e_id", "heading", "version", "snippet")


def _public(hit: dict) -> dict:
    """What a model sees of a hit: no fusion internals (scores, ranks) that would invite it to trust them."""
    return {k: hit[k] for k in _PUBLIC}
