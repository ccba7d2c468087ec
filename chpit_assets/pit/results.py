"""The point-in-time tools' answers: plain frozen dataclasses, each with its published JSON shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .errors import (
    jsonable,
)


@dataclass(frozen=True)
class ActRef:
    """Which act answered; `other_act_ids` are the acts sharing its SR number that lost the tiebreak."""

    act_id: int
    sr_number: str
    eli: str
    abbreviation: str | None  # in the requested language: de from ch_act, fr/it/... from ch_act_alias (B7)
    title: str | None  # in the requested language
    enforcement_status: int  # 0 = in force
    other_act_ids: list[int] = field(default_factory=list)

    def header(self, lang: str) -> dict[str, Any]:
        """The published response's leading keys, then ours (`act`)."""
        return {"sr_number": self.sr_number, "abbreviation": self.abbreviation, "title": self.title, "lang": lang}

    def extra(self) -> dict[str, Any]:
        return {
            "act_id": self.act_id,
            "eli": self.eli,
            "enforcement_status": self.enforcement_status,
            "other_act_ids": self.other_act_ids,
        }


@dataclass(frozen=True)
class EditionRef:
    version_id: int
    date_applicability: date
    date_end_applicability: date | None  # inclusive last day; None = no end known (current)
    eli: str  # the consolidation's ELI
    source: str  # 'fedlex' (XML)

    def to_dict(self) -> dict[str, Any]:
        """The published `version` object (PROTOCOL §5), `source` beside it."""
        return {
            "version_id": self.version_id,
            "date_applicability": self.date_applicability.isoformat(),
            "date_end_applicability": jsonable(self.date_end_applicability),
            "eli_consolidation_uri": self.eli,
            "source": self.source,
        }


@dataclass(frozen=True)
class Carrier:
    """Another article of the same edition carrying the asked-for number (B9's ambiguous case)."""

    e_id: str
    occurrence: int
    heading: str | None


@dataclass(frozen=True)
class ArticleResult:
    act: ActRef
    edition: EditionRef
    lang: str
    as_of: date  # the date the edition was chosen for
    as_of_defaulted: bool  # True when no date was passed and today was used
    e_id: str
    occurrence: int  # with e_id, the article's key in its edition
    article_number: str | None
    heading: str | None  # the published `marginal_note`
    text: str  # verbatim, one numbered paragraph per line
    also_carried_by: list[Carrier] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The published response of `ch_get_act_article`, our fields beside the published keys."""
        return {
            **self.act.header(self.lang),
            "as_of": self.as_of.isoformat(),
            "version": self.edition.to_dict(),
            "article": {
                "e_id": self.e_id,
                "article_number": self.article_number,
                "marginal_note": self.heading,
                "text": self.text,
                "occurrence": self.occurrence,
                "also_carried_by": jsonable(self.also_carried_by),
            },
            "as_of_defaulted": self.as_of_defaulted,
            "act": self.act.extra(),
        }


@dataclass(frozen=True)
class ArticleChange:
    """One article's change between two consecutive parsed editions (B3): keyed by (e_id, occurrence)."""

    old_version_id: int
    new_version_id: int
    date_applicability: date  # the new edition's
    e_id: str
    occurrence: int
    article_number: str | None  # the new edition's, the old one's for a removal
    change_type: str  # added | removed | modified


@dataclass(frozen=True)
class HistoryResult:
    act: ActRef
    lang: str
    today: date
    article: str | None  # the filter, as asked
    editions: list[EditionRef]  # parsed editions, oldest first
    today_version_id: int | None  # the edition a call without a date answers from
    changes: list[ArticleChange]  # consecutive pairs oldest first, then document order
    gaps: list[tuple[date, date]]  # days no parsed edition covers, between two consecutive ones

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.act.header(self.lang),
            "editions": [
                {**e.to_dict(), "in_force_today": e.version_id == self.today_version_id} for e in self.editions
            ],
            "changes": jsonable(self.changes),
            "article": self.article,
            "today": self.today.isoformat(),
            "gaps": [{"date_from": a.isoformat(), "date_to": b.isoformat()} for a, b in self.gaps],
            "act": self.act.extra(),
        }


@dataclass(frozen=True)
class TextArticle:
    """Where an article's block starts in the edition's full text."""

    e_id: str
    occurrence: int
    article_number: str | None
    offset: int


@dataclass(frozen=True)
class TextResult:
    act: ActRef
    edition: EditionRef
    lang: str
    as_of: date
    offset: int
    max_chars: int
    total_chars: int
    text: str  # the full text's characters [offset, offset + max_chars)
    next_offset: int | None  # None: this page reaches the end
    articles: list[TextArticle]  # the articles whose block starts on this page

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.act.header(self.lang),
            "as_of": self.as_of.isoformat(),
            "version": self.edition.to_dict(),
            "offset": self.offset,
            "max_chars": self.max_chars,
            "total_chars": self.total_chars,
            "next_offset": self.next_offset,
            "text": self.text,
            "articles": jsonable(self.articles),
            "act": self.act.extra(),
        }
