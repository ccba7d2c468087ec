"""The Fedlex catalog as plain data, and the offline catalog read from the shipped sample.

Both sources (the live SPARQL client in `sparql.py` and `load_sample_catalog`
here) produce the same `Catalog`, so everything downstream is source-agnostic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

LANGS: tuple[str, ...] = ("de", "fr", "it", "en", "rm")
"""Every language Fedlex publishes consolidations in; CH-PiT builds de/fr/it."""

# EU authority language codes used by Fedlex's graph -> our two-letter codes.
EU_LANGUAGE_CODES: dict[str, str] = {"DEU": "de", "FRA": "fr", "ITA": "it", "ENG": "en", "ROH": "rm"}


MAX_CATALOG_BYTES = 128 * 1024 * 1024
"""The largest catalog file read (docs/limits.md): the whole live catalog, every act in five
languages, is some 20 MB as JSON."""


class CatalogError(ValueError):
    """The catalog (live answer or sample file) is not what it should be."""


@dataclass(frozen=True)
class ActTitle:
    title: str
    title_short: str | None


@dataclass(frozen=True)
class CatalogAct:
    eli: str  # ConsolidationAbstract, e.g. https://fedlex.data.admin.ch/eli/cc/2022/491
    sr_number: str  # e.g. "235.1"
    in_force_status: int  # 0 = in force
    date_entry_in_force: date | None
    date_no_longer_in_force: date | None
    titles: dict[str, ActTitle] = field(default_factory=dict, hash=False, compare=True)


@dataclass(frozen=True)
class CatalogEdition:
    act_eli: str
    consolidation: str  # e.g. https://fedlex.data.admin.ch/eli/cc/2022/491/20250401
    lang: str
    date_applicability: date
    date_end_applicability: date | None  # inclusive last day; None = current
    file_url: str | None  # None = Fedlex lists no XML file ("no file"; never invented)
    sha256: str | None = None  # expected digest when the source knows it (the sample does)


@dataclass(frozen=True)
class Catalog:
    acts: tuple[CatalogAct, ...]
    editions: tuple[CatalogEdition, ...]

    def for_lang(self, lang: str) -> Catalog:
        """The editions in one language and the acts they belong to."""
        editions = tuple(e for e in self.editions if e.lang == lang)
        elis = {e.act_eli for e in editions}
        return Catalog(tuple(a for a in self.acts if a.eli in elis), editions)

    def act(self, eli: str) -> CatalogAct:
        try:
            return self._acts_by_eli[eli]
        except KeyError:
            raise CatalogError(f"no act {eli} in the catalog") from None

    @cached_property
    def _acts_by_eli(self) -> dict[str, CatalogAct]:
        # Looked up once per edition: a dict keeps a 12,000-edition ingest linear.
        return {a.eli: a for a in self.acts}

    def __reduce__(self) -> tuple[Callable[..., Catalog], tuple[tuple[_ActRow, ...], tuple[EditionRow, ...]]]:
        """Pickled as rows of plain values, dates as day ordinals, not as one dataclass state per act
        and edition: every language run pickles its catalog for the runs that would load it from
        disk (the handover IO manager), and at CH-PiT scale (4,280 editions) this takes 6 ms, not
        18 ms (issue 27.2). Reading it back takes 12 ms, not 9.5 (each object is made through its
        constructor), which only a run that loads it from disk pays. The index lookup cached on the
        object is not pickled."""
        acts = tuple(
            (
                a.eli,
                a.sr_number,
                a.in_force_status,
                _ordinal(a.date_entry_in_force),
                _ordinal(a.date_no_longer_in_force),
                tuple((lang, t.title, t.title_short) for lang, t in a.titles.items()),
            )
            for a in self.acts
        )
        return _catalog_from_rows, (acts, tuple(map(edition_row, self.editions)))


_ActRow = tuple[str, str, int, int | None, int | None, tuple[tuple[str, str, str | None], ...]]
EditionRow = tuple[str, str, str, int, int | None, str | None, str | None]
"""A CatalogEdition's fields in order, its dates as day ordinals: how editions are pickled."""


def edition_row(e: CatalogEdition) -> EditionRow:
    return (
        e.act_eli,
        e.consolidation,
        e.lang,
        e.date_applicability.toordinal(),
        _ordinal(e.date_end_applicability),
        e.file_url,
        e.sha256,
    )


def edition_from_row(row: EditionRow) -> CatalogEdition:
    act_eli, consolidation, lang, start, end, file_url, sha256 = row
    return CatalogEdition(act_eli, consolidation, lang, date.fromordinal(start), _day(end), file_url, sha256)


def _ordinal(day: date | None) -> int | None:
    return None if day is None else day.toordinal()


def _day(ordinal: int | None) -> date | None:
    return None if ordinal is None else date.fromordinal(ordinal)


def _catalog_from_rows(acts: tuple[_ActRow, ...], editions: tuple[EditionRow, ...]) -> Catalog:
    """The catalog `Catalog.__reduce__` pickled."""
    return Catalog(
        tuple(
            CatalogAct(eli, sr, status, _day(start), _day(end), {lang: ActTitle(t, short) for lang, t, short in titles})
            for eli, sr, status, start, end, titles in acts
        ),
        tuple(map(edition_from_row, editions)),
    )


def _date(value: str | None, what: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise CatalogError(f"{what}: not an ISO date: {value!r}") from exc


def _required_date(value: str | None, what: str) -> date:
    day = _date(value, what)
    if day is None:
        raise CatalogError(f"{what}: missing")
    return day


# What quote() leaves as it is (its always-safe characters and "/"): such a name is its own quoting.
_UNQUOTED = re.compile(r"[A-Za-z0-9_.~/-]*")


def _file_url(base_uri: str, name: str, catalog: Path, where: str) -> str:
    """The file:// url of a catalog's file entry, which must be a plain relative path inside the
    catalog's folder: no part empty (nor a leading "/"), "." or ".."."""
    padded = f"/{name}/"
    if "//" in padded or "/./" in padded or "/../" in padded:
        raise CatalogError(f"{catalog}: edition {where}: file {name!r} is not a plain relative path inside the sample")
    # Checked, not quoted, when nothing needs quoting: quote() per file was a tenth of the load.
    return f"{base_uri}/{name if _UNQUOTED.fullmatch(name) else quote(name)}"


def check_editions(catalog: Catalog, source: str) -> Catalog:
    """`catalog`, or a CatalogError naming act, language and dates (issue 23 item 2): an edition
    ending before it starts, or two editions of one act in one language from the same day (a
    point-in-time question would have two answers). Both sources call it on what they built."""
    acts = {a.eli: a for a in catalog.acts}
    seen: dict[tuple[str, str, date], CatalogEdition] = {}
    for e in catalog.editions:
        if e.date_end_applicability is not None and e.date_end_applicability < e.date_applicability:
            raise CatalogError(
                f"{source}: {_act_name(acts, e.act_eli)} [{e.lang}] edition of {e.date_applicability}: it ends on "
                f"{e.date_end_applicability}, before it starts"
            )
        earlier = seen.setdefault((e.act_eli, e.lang, e.date_applicability), e)
        if earlier is not e:
            raise CatalogError(
                f"{source}: {_act_name(acts, e.act_eli)} [{e.lang}] has two editions applicable from "
                f"{e.date_applicability} ({earlier.consolidation} and {e.consolidation})"
            )
    return catalog


def _act_name(acts: dict[str, CatalogAct], eli: str) -> str:
    # Named only for an error: formatting it for every edition was most of the check's time.
    act = acts.get(eli)
    return f"act SR {act.sr_number} ({eli})" if act is not None else f"act {eli}"


def load_sample_catalog(sample_dir: Path, langs: Collection[str] | None = None) -> Catalog:
    """Read `catalog.json` of the shipped sample; file urls become `file://` urls of its files.

    `langs`: only the editions in these languages are read (every edition's language is still
    checked), as the live query asks Fedlex for one language: a language partition's run reads its
    own editions and is failed by its own, not by another language's (and at CH-PiT scale it
    no longer builds and checks 8,500 editions it drops)."""
    path = Path(sample_dir) / "catalog.json"
    try:
        size = path.stat().st_size
        if size > MAX_CATALOG_BYTES:
            raise CatalogError(f"sample catalog {path}: {size} bytes, over the limit of {MAX_CATALOG_BYTES} bytes")
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogError(f"cannot read sample catalog {path}: {exc}") from exc
    acts: list[CatalogAct] = []
    editions: list[CatalogEdition] = []
    # The base is resolved and made a URI once: doing it per file cost a quarter second at 12,000 files.
    base_uri = Path(sample_dir).resolve().as_uri()
    for a in raw.get("acts", []):
        for key in ("eli", "sr_number", "in_force_status", "editions"):
            if key not in a:
                raise CatalogError(f"{path}: act {a.get('eli', '?')} lacks field {key!r}")
        acts.append(
            CatalogAct(
                eli=a["eli"],
                sr_number=str(a["sr_number"]).strip(),
                in_force_status=int(a["in_force_status"]),
                date_entry_in_force=_date(a.get("date_entry_in_force"), f"{a['eli']} date_entry_in_force"),
                date_no_longer_in_force=_date(a.get("date_no_longer_in_force"), f"{a['eli']} date_no_longer_in_force"),
                titles={
                    lang: ActTitle(t["title"], t.get("title_short")) for lang, t in (a.get("titles") or {}).items()
                },
            )
        )
        for e in a["editions"]:
            lang = e.get("lang")
            # Another language's edition is skipped before it is named (naming every edition cost a
            # third of the read); a misspelt language is refused whichever languages are read.
            if lang in LANGS and langs is not None and lang not in langs:
                continue
            where = f"{e.get('consolidation', a['eli'])} [{lang}]"
            if lang not in LANGS:
                raise CatalogError(f"{path}: edition {where}: unknown language {lang!r}")
            file_url = _file_url(base_uri, e["file"], path, where) if e.get("file") else None
            editions.append(
                CatalogEdition(
                    act_eli=a["eli"],
                    consolidation=e["consolidation"],
                    lang=e["lang"],
                    date_applicability=_required_date(e["date_applicability"], f"{where} date_applicability"),
                    date_end_applicability=_date(e.get("date_end_applicability"), f"{where} date_end_applicability"),
                    file_url=file_url,
                    sha256=e.get("sha256"),
                )
            )
    return check_editions(Catalog(tuple(acts), tuple(editions)), str(path))
