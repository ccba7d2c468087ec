"""The live Fedlex catalog, read from the public SPARQL endpoint.

Three query shapes, each `SELECT DISTINCT` (Fedlex serves the same triples from
several named graphs, so plain SELECT repeats rows), each paged by key, never by
OFFSET (the endpoint refuses OFFSET past 10,000 rows):

- ACTS      ConsolidationAbstract -> SR notation (datatype id-systematique),
            inForceStatus, dateEntryInForce, dateNoLongerInForce.
- TITLES    act -> isRealizedBy expression -> language, title, titleShort.
- EDITIONS  consolidation isMemberOf act -> dateApplicability, dateEndApplicability,
            isRealizedBy expression -> language, and through the SAME expression
            isEmbodiedBy manifestation (userFormat xml) -> isExemplifiedBy /
            isExemplifiedByPrivate.

Key paging: `ORDER BY STR(?key)`, `LIMIT page_size`, and the next page starts at
`STR(?key) >= last key seen` (>=, not >: the last key of a full page may have been
cut in the middle of its rows; the rows seen twice are dropped client-side). The
key is the act for ACTS and the expression for the others, because one key's rows
must fit in a page and an expression has only a handful (one per file build).

TITLES and EDITIONS run per batch of acts (`VALUES ?act { ... }`, 20 by default),
which keeps each answer small and gives the firewall split below something to split.

Counting is client-side only (aggregates on this endpoint are unreliable): the
`FetchReport` counts rows received and rows kept.

Firewall: a web application firewall in front of the endpoint answers some
queries with HTTP 400 and an HTML page (a real SPARQL syntax error comes back as
text, not HTML). Decision: a blocked batch of several acts is split in two and
each half retried, recursively, because what trips the firewall is usually the
size of the query; a blocked query about a single act (or the unbatched listing)
cannot be made smaller, so it raises `FedlexFirewallError`: a catalog silently
missing acts is worse than a failed run.

File links: `isExemplifiedBy` is the public filestore URL. Some manifestations
carry only `isExemplifiedByPrivate`, on the intranet host
(`https://intranet.fedlex.admin.ch/casematesbo/filestore/<path>`); the same file is
published at `https://fedlex.data.admin.ch/filestore/<path>`, so the private URL is
mapped by keeping everything from `/filestore/` on and swapping the host. A
manifestation with neither (or an unmappable private URL) means "no file":
`file_url = None`, never a guessed URL. Several builds of one edition
(`...-de-xml-2.xml`, `...-de-xml-3.xml`) -> the highest build number wins.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import NamedTuple
from urllib.parse import urlsplit

import httpx

from ..retry import RetryPolicy
from .catalog import (
    EU_LANGUAGE_CODES,
    LANGS,
    ActTitle,
    Catalog,
    CatalogAct,
    CatalogEdition,
    CatalogError,
    check_editions,
)
from .http import (
    FedlexHttpError,
    FedlexHttpUser,
    Sleep,
    request_with_retry,
)

log = logging.getLogger(__name__)

ENDPOINT = "https://fedlex.data.admin.ch/sparqlendpoint"
PUBLIC_FILESTORE = "https://fedlex.data.admin.ch/filestore/"
SR_NOTATION_TYPE = "https://fedlex.data.admin.ch/vocabulary/notation-type/id-systematique"
XML_USER_FORMAT = "https://fedlex.data.admin.ch/vocabulary/user-format/xml"
LANGUAGE_AUTHORITY = "http://publications.europa.eu/resource/authority/language/"

_LANG_IRI = {code: LANGUAGE_AUTHORITY + eu for eu, code in EU_LANGUAGE_CODES.items()}
_PREFIXES = (
    "PREFIX jolux: <http://data.legilux.public.lu/resource/ontology/jolux#>\n"
    "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
)

ACTS_QUERY = (
    _PREFIXES
    + """SELECT DISTINCT ?act ?sr ?status ?entry ?noLonger WHERE {{
  {values}
  ?act a jolux:ConsolidationAbstract ;
       jolux:classifiedByTaxonomyEntry/skos:notation ?sr .
  FILTER(DATATYPE(?sr) = <%s>)
  OPTIONAL {{ ?act jolux:inForceStatus ?status }}
  OPTIONAL {{ ?act jolux:dateEntryInForce ?entry }}
  OPTIONAL {{ ?act jolux:dateNoLongerInForce ?noLonger }}
  {after}
}}
ORDER BY STR(?act)
LIMIT {limit}"""
    % SR_NOTATION_TYPE
)

TITLES_QUERY = (
    _PREFIXES
    + """SELECT DISTINCT ?act ?expr ?lang ?title ?short WHERE {{
  {values}
  ?act jolux:isRealizedBy ?expr .
  ?expr jolux:language ?lang .
  OPTIONAL {{ ?expr jolux:title ?title }}
  OPTIONAL {{ ?expr jolux:titleShort ?short }}
  {after}
}}
ORDER BY STR(?expr)
LIMIT {limit}"""
)

# Language and manifestation hang off the same ?expr: binding them separately
# would pair a German expression with the French file.
EDITIONS_QUERY = (
    _PREFIXES
    + """SELECT DISTINCT ?act ?cons ?expr ?date ?end ?lang ?file ?private WHERE {{
  {values}
  ?cons jolux:isMemberOf ?act ;
        jolux:dateApplicability ?date ;
        jolux:isRealizedBy ?expr .
  ?expr jolux:language ?lang .
  OPTIONAL {{ ?cons jolux:dateEndApplicability ?end }}
  OPTIONAL {{
    ?expr jolux:isEmbodiedBy ?manif .
    ?manif jolux:userFormat <%s> .
    OPTIONAL {{ ?manif jolux:isExemplifiedBy ?file }}
    OPTIONAL {{ ?manif jolux:isExemplifiedByPrivate ?private }}
  }}
  {after}
}}
ORDER BY STR(?expr)
LIMIT {limit}"""
    % XML_USER_FORMAT
)


class FedlexFirewallError(FedlexHttpError):
    """The web firewall in front of the endpoint refused the query (HTTP 400/403 with an HTML page)."""


class FedlexQueryError(FedlexHttpError):
    """The endpoint refused the query itself (a non-HTML 4xx: our SPARQL is wrong)."""


class FedlexResponseError(FedlexHttpError):
    """The endpoint answered 200 with something that is not a usable SPARQL JSON result."""


class Term(NamedTuple):
    value: str
    kind: str  # "uri", "literal", "bnode"
    datatype: str | None = None


Row = dict[str, Term]


@dataclass
class FetchReport:
    """What one catalog fetch cost and what it had to paper over. Counted client-side."""

    queries: int = 0  # HTTP requests that returned a result (pages)
    rows_received: int = 0  # bindings as served, duplicates included
    rows_kept: int = 0  # after client-side de-duplication
    retries: int = 0
    firewall_splits: int = 0
    private_urls_mapped: int = 0
    editions_without_file: int = 0
    warnings: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        log.warning(message)
        self.warnings.append(message)


class FedlexSparqlClient(FedlexHttpUser):
    """Reads the Fedlex catalog. `endpoint` is configurable (tests use 127.0.0.1)."""

    def __init__(
        self,
        endpoint: str = ENDPOINT,
        *,
        http: httpx.Client | None = None,
        timeout: float = 120.0,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Sleep = time.sleep,
        batch_size: int = 20,
        page_size: int = 5000,
    ):
        if not 1 <= page_size <= 10_000:
            # Above 10,000 the endpoint truncates silently; a short page would look like the last one.
            raise ValueError(f"page_size must be in 1..10000, got {page_size}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        super().__init__(http, timeout, retry, sleep)
        self.endpoint = endpoint
        self.batch_size = batch_size
        self.page_size = page_size
        self.report = FetchReport()

    # -- one query -------------------------------------------------------------------------

    def select(self, query: str, purpose: str) -> list[Row]:
        """Run one SELECT; return its rows as {var: Term}. Raises a FedlexHttpError subclass."""

        def count_retry(attempt: int, why: str) -> None:
            self.report.retries += 1
            log.info("%s: try %d failed (%s); retrying", purpose, attempt, why)

        response = request_with_retry(
            self.http,
            "POST",
            self.endpoint,
            purpose=purpose,
            policy=self.retry,
            sleep=self.sleep,
            on_retry=count_retry,
            data={"query": query},
            headers={"Accept": "application/sparql-results+json"},
        )
        if response.status_code != 200:
            detail = _body_excerpt(response)
            if response.status_code in (400, 403) and _is_html(response):
                raise FedlexFirewallError(
                    f"refused by the web firewall (HTML page): {detail}",
                    url=self.endpoint,
                    purpose=purpose,
                    status=response.status_code,
                )
            error = FedlexQueryError if 400 <= response.status_code < 500 else FedlexHttpError
            raise error(detail, url=self.endpoint, purpose=purpose, status=response.status_code)
        try:
            bindings = response.json()["results"]["bindings"]
            rows = [{var: _term(b) for var, b in binding.items()} for binding in bindings]
        except (ValueError, KeyError, TypeError) as exc:
            raise FedlexResponseError(
                f"not a SPARQL JSON result ({type(exc).__name__}: {exc}): {_body_excerpt(response)}",
                url=self.endpoint,
                purpose=purpose,
                status=200,
            ) from exc
        self.report.queries += 1
        self.report.rows_received += len(rows)
        return rows

    # -- paging and batching ---------------------------------------------------------------

    def _paged(self, template: str, key: str, values: str, purpose: str) -> list[Row]:
        """All rows of one query, paged by `key` (see module doc); duplicates dropped."""
        seen: set[tuple] = set()
        out: list[Row] = []
        start: str | None = None
        while True:
            after = "" if start is None else f"FILTER(STR(?{key}) >= {_literal(start)})"
            page_purpose = purpose if start is None else f"{purpose}, page from {start}"
            rows = self.select(template.format(values=values, after=after, limit=self.page_size), page_purpose)
            for row in rows:
                fingerprint = tuple(sorted(row.items()))
                if fingerprint not in seen:
                    seen.add(fingerprint)
                    out.append(row)
            if len(rows) < self.page_size:
                return out
            keys = [r[key].value for r in rows if key in r]
            last = max(keys) if keys else None
            if last is None or last == start:
                # A full page that never gets past its start key: one key has more rows than a page.
                raise FedlexResponseError(
                    f"key paging is stuck at {start!r}: more than {self.page_size} rows for one ?{key}",
                    url=self.endpoint,
                    purpose=page_purpose,
                    status=200,
                )
            start = last

    def _batched(
        self, template: str, key: str, var: str, terms: Sequence[str], purpose: str, extra_values: str = ""
    ) -> list[Row]:
        """Run `template` for `terms` (SPARQL terms bound to ?var) in VALUES blocks; split on firewall blocks."""
        out: list[Row] = []
        pending = [list(terms[i : i + self.batch_size]) for i in range(0, len(terms), self.batch_size)]
        while pending:
            batch = pending.pop(0)
            values = f"VALUES ?{var} {{ {' '.join(batch)} }}\n  {extra_values}"
            what = f"{purpose} for {batch[0]}" + (f" and {len(batch) - 1} more" if len(batch) > 1 else "")
            try:
                out.extend(self._paged(template, key, values, what))
            except FedlexFirewallError:
                if len(batch) == 1:
                    raise
                self.report.firewall_splits += 1
                half = len(batch) // 2
                self.report.warn(
                    f"{what}: blocked by the web firewall; retrying as two batches of {half} and {len(batch) - half}"
                )
                pending[:0] = [batch[:half], batch[half:]]
        self.report.rows_kept += len(out)
        return out

    # -- the catalog -----------------------------------------------------------------------

    def fetch_catalog(
        self,
        *,
        sr_numbers: Iterable[str] | None = None,
        elis: Iterable[str] | None = None,
        langs: Iterable[str] = LANGS,
    ) -> Catalog:
        """The catalog of SR consolidations, optionally only some acts and languages.

        `sr_numbers` and `elis` select acts (their union); both None = every act
        with an SR number. `langs` restricts titles and editions. Anything the
        endpoint had to be forgiven for is in `self.report.warnings`.
        """
        langs = tuple(dict.fromkeys(langs))
        unknown = [l for l in langs if l not in LANGS]
        if unknown or not langs:
            raise ValueError(f"langs must be a non-empty subset of {LANGS}, got {langs}")
        self.report = FetchReport()

        act_rows = self._act_rows(sr_numbers, elis)
        acts = self._acts(act_rows)
        act_terms = [_iri(eli) for eli in sorted(acts)]
        lang_values = "VALUES ?lang { " + " ".join(_iri(_LANG_IRI[l]) for l in langs) + " }"

        titles = self._titles(self._batched(TITLES_QUERY, "expr", "act", act_terms, "act titles", lang_values))
        editions = self._editions(self._batched(EDITIONS_QUERY, "expr", "act", act_terms, "act editions", lang_values))
        lang_order = {l: i for i, l in enumerate(LANGS)}
        catalog = Catalog(
            acts=tuple(CatalogAct(**fields, titles=titles.get(eli, {})) for eli, fields in sorted(acts.items())),
            editions=tuple(
                sorted(editions, key=lambda e: (e.act_eli, e.date_applicability, lang_order[e.lang], e.consolidation))
            ),
        )
        return check_editions(catalog, f"the Fedlex catalog at {self.endpoint}")

    def _act_rows(self, sr_numbers: Iterable[str] | None, elis: Iterable[str] | None) -> list[Row]:
        if sr_numbers is None and elis is None:
            rows = self._paged(ACTS_QUERY, "act", "", "list of SR acts")
            self.report.rows_kept += len(rows)
            return rows
        srs = sorted({str(s).strip() for s in sr_numbers or ()})
        wanted_elis = sorted(set(elis or ()))
        rows = []
        if srs:
            terms = [f"{_literal(s)}^^{_iri(SR_NOTATION_TYPE)}" for s in srs]
            rows += self._batched(ACTS_QUERY, "act", "sr", terms, "acts by SR number")
        if wanted_elis:
            rows += self._batched(ACTS_QUERY, "act", "act", [_iri(e) for e in wanted_elis], "acts by ELI")
        found_srs = {r["sr"].value for r in rows if "sr" in r}
        found_elis = {r["act"].value for r in rows if "act" in r}
        for s in srs:
            if s not in found_srs:
                self.report.warn(f"SR {s}: no consolidated act with this SR number on Fedlex")
        for e in wanted_elis:
            if e not in found_elis:
                self.report.warn(f"{e}: not a consolidated act with an SR number on Fedlex")
        return rows

    def _acts(self, rows: list[Row]) -> dict[str, dict]:
        """eli -> CatalogAct fields (titles added later). Conflicting values: warn, keep the smallest."""
        by_act: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
        for row in rows:
            eli = _value(row, "act")
            sr = row.get("sr")
            # The query filters on the datatype already; checked again because the
            # same string under notation types `id`/`id-amt` names a different act.
            if eli is None or sr is None or sr.datatype not in (None, SR_NOTATION_TYPE):
                continue
            fields = by_act[eli]
            fields["sr_number"].add(sr.value.strip())
            for var, name in (
                ("status", "in_force_status"),
                ("entry", "date_entry_in_force"),
                ("noLonger", "date_no_longer_in_force"),
            ):
                if var in row:
                    fields[name].add(row[var].value)
        acts: dict[str, dict] = {}
        for eli, fields in by_act.items():
            status_raw = self._one(fields["in_force_status"], f"{eli} inForceStatus")
            status = _status_code(status_raw)
            if status is None:
                self.report.warn(f"{eli}: dropped, no usable jolux:inForceStatus ({status_raw!r})")
                continue
            try:
                acts[eli] = dict(
                    eli=eli,
                    sr_number=self._one(fields["sr_number"], f"{eli} SR number"),
                    in_force_status=status,
                    date_entry_in_force=_date(
                        self._one(fields["date_entry_in_force"], f"{eli} dateEntryInForce"), f"{eli} dateEntryInForce"
                    ),
                    date_no_longer_in_force=_date(
                        self._one(fields["date_no_longer_in_force"], f"{eli} dateNoLongerInForce"),
                        f"{eli} dateNoLongerInForce",
                    ),
                )
            except CatalogError as exc:
                self.report.warn(f"{eli}: dropped, {exc}")
        return acts

    def _titles(self, rows: list[Row]) -> dict[str, dict[str, ActTitle]]:
        found: dict[tuple[str, str], tuple[set, set]] = defaultdict(lambda: (set(), set()))
        for row in rows:
            lang = self._lang(row)
            eli = _value(row, "act")
            if lang is None or eli is None:
                continue
            titles, shorts = found[(eli, lang)]
            if _value(row, "title"):
                titles.add(" ".join(row["title"].value.split()))
            if _value(row, "short") and row["short"].value.strip():
                shorts.add(row["short"].value.strip())
        out: dict[str, dict[str, ActTitle]] = defaultdict(dict)
        for (eli, lang), (titles, shorts) in sorted(found.items()):
            title = self._one(titles, f"{eli} [{lang}] title")
            if title is None:
                self.report.warn(f"{eli} [{lang}]: expression without jolux:title; no title in this language")
                continue
            out[eli][lang] = ActTitle(title, self._one(shorts, f"{eli} [{lang}] titleShort"))
        return out

    def _editions(self, rows: list[Row]) -> list[CatalogEdition]:
        found: dict[tuple[str, str, str], dict[str, set]] = defaultdict(lambda: defaultdict(set))
        for row in rows:
            lang = self._lang(row)
            eli, cons = _value(row, "act"), _value(row, "cons")
            if lang is None or eli is None or cons is None or "date" not in row:
                continue
            slot = found[(eli, cons, lang)]
            slot["date"].add(row["date"].value)
            for var in ("end", "file", "private"):
                if var in row:
                    slot[var].add(row[var].value)
        editions = []
        for (eli, cons, lang), slot in found.items():
            where = f"{cons} [{lang}]"
            try:
                start = _date(self._one(slot["date"], f"{where} dateApplicability"), f"{where} dateApplicability")
                if start is None:
                    raise CatalogError(f"{where} dateApplicability: missing")
                end = _date(self._one(slot["end"], f"{where} dateEndApplicability"), f"{where} dateEndApplicability")
            except CatalogError as exc:
                self.report.warn(f"{where}: dropped, {exc}")
                continue
            file_url = self._file_url(slot["file"], slot["private"], where)
            if file_url is None:
                self.report.editions_without_file += 1
            editions.append(CatalogEdition(eli, cons, lang, start, end, file_url))
        return editions

    def _file_url(self, public: set[str], private: set[str], where: str) -> str | None:
        candidates = {url: True for url in public}
        for url in private:
            mapped = public_url(url)
            if mapped is None:
                self.report.warn(f"{where}: private file URL {url} has no /filestore/ path; not mapped")
            elif mapped not in candidates:
                candidates[mapped] = False
                self.report.private_urls_mapped += 1
        if not candidates:
            return None
        # Highest build wins; at equal build prefer the link Fedlex publishes; then the URL, for determinism.
        return max(candidates, key=lambda u: (build_number(u), candidates[u], u))

    def _lang(self, row: Row) -> str | None:
        iri = _value(row, "lang")
        code = EU_LANGUAGE_CODES.get(iri.rsplit("/", 1)[-1]) if iri and iri.startswith(LANGUAGE_AUTHORITY) else None
        if code is None and iri is not None:
            message = f"language {iri} is not one of {sorted(EU_LANGUAGE_CODES)}; its rows are ignored"
            if message not in self.report.warnings:
                self.report.warn(message)
        return code

    def _one(self, values: set[str], what: str) -> str | None:
        """The single value of a property; several (data served inconsistently) -> warn, keep the smallest."""
        if not values:
            return None
        if len(values) > 1:
            self.report.warn(f"{what}: {len(values)} different values {sorted(values)}; keeping {min(values)!r}")
        return min(values)


def fetch_catalog(
    endpoint: str = ENDPOINT,
    *,
    sr_numbers: Iterable[str] | None = None,
    elis: Iterable[str] | None = None,
    langs: Iterable[str] = LANGS,
    **client_options,
) -> Catalog:
    """One-shot convenience: open a client, fetch the catalog, close it."""
    with FedlexSparqlClient(endpoint, **client_options) as client:
        return client.fetch_catalog(sr_numbers=sr_numbers, elis=elis, langs=langs)


# -- small pure helpers ----------------------------------------------------------------------

_BUILD = re.compile(r"-xml-(\d+)\.xml$", re.IGNORECASE)


def build_number(url: str) -> int:
    """The build suffix of a filestore file name (`...-de-xml-3.xml` -> 3); 0 when absent."""
    m = _BUILD.search(urlsplit(url).path)
    return int(m.group(1)) if m else 0


def public_url(private_url: str) -> str | None:
    """Map an intranet filestore URL to the public filestore (see module doc); None if it has no /filestore/."""
    path = urlsplit(private_url).path
    marker = path.find("/filestore/")
    if marker < 0:
        return None
    return PUBLIC_FILESTORE + path[marker + len("/filestore/") :]


def _status_code(value: str | None) -> int | None:
    # .../vocabulary/enforcement-status/0 -> 0 (a bare integer literal is accepted too)
    m = re.search(r"(\d+)$", value or "")
    return int(m.group(1)) if m else None


def _date(value: str | None, what: str) -> date | None:
    if value is None:
        return None
    # xsd:date may carry a timezone ("2023-09-01+02:00"); the day is what counts.
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError as exc:
        raise CatalogError(f"{what}: not an ISO date: {value!r}") from exc


def _term(binding: dict) -> Term:
    kind = binding["type"]
    if kind == "typed-literal":  # SPARQL JSON as written by older stores
        kind = "literal"
    return Term(binding["value"], kind, binding.get("datatype"))


def _value(row: Row, var: str) -> str | None:
    term = row.get(var)
    return term.value if term is not None else None


def _iri(value: str) -> str:
    if not value or re.search(r'[\s<>"{}|^`\\]', value):
        raise ValueError(f"not usable as an IRI in a query: {value!r}")
    return f"<{value}>"


def _literal(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _is_html(response: httpx.Response) -> bool:
    if "html" in response.headers.get("Content-Type", "").lower():
        return True
    return response.content[:300].lstrip().lower().startswith((b"<!doctype html", b"<html"))


def _body_excerpt(response: httpx.Response) -> str:
    text = " ".join(response.text[:300].split())
    return repr(text) if text else "(empty body)"
