"""The live catalog client against a fake Fedlex endpoint on 127.0.0.1 (see conftest)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, date, datetime

import httpx
import pytest

from chpit_assets.fedlex.catalog import Catalog
from chpit_assets.fedlex.http import FedlexHttpError
from chpit_assets.fedlex.sparql import (
    FedlexFirewallError,
    FedlexQueryError,
    FedlexResponseError,
    FedlexSparqlClient,
    build_number,
    fetch_catalog,
    public_url,
)
from chpit_assets.retry import RetryPolicy, retry_after_seconds

from .conftest import (
    EU,
    FAST_RETRY,
    LANG_IRI,
    PRIVATE_HOST,
    SR_TYPE,
    STATUS,
    WAF_PAGE,
    XSD_DATE,
    FakeFedlex,
    Reply,
    filestore_path,
    lit,
    uri,
)

DSG = "https://fedlex.data.admin.ch/eli/cc/2022/491"
PUBLG = "https://fedlex.data.admin.ch/eli/cc/2004/745"
BV = "https://fedlex.data.admin.ch/eli/cc/1999/404"


def same(a: Catalog, b: Catalog) -> bool:
    """Equal up to order (the live client sorts; the sample keeps its file order)."""
    return (
        sorted(a.acts, key=lambda x: x.eli) == sorted(b.acts, key=lambda x: x.eli)
        and set(a.editions) == set(b.editions)
        and len(a.editions) == len(b.editions)
    )


def client(fedlex: FakeFedlex, sleeps, **options) -> FedlexSparqlClient:
    options.setdefault("retry", FAST_RETRY)
    return FedlexSparqlClient(fedlex.endpoint, sleep=sleeps, timeout=5.0, **options)


def edition(catalog: Catalog, consolidation: str, lang: str):
    (found,) = [e for e in catalog.editions if e.consolidation == consolidation and e.lang == lang]
    return found


def add_edition_rows(fedlex: FakeFedlex, consolidation: str, lang: str, **links) -> None:
    """Replace the graph's rows of one edition with one row per given link set."""
    base = next(
        r
        for r in fedlex.graph.editions
        if r["cons"]["value"] == consolidation and r["lang"]["value"] == LANG_IRI + EU[lang]
    )
    fedlex.graph.editions.remove(base)
    for link in links.get("rows", [{}]):
        row = {k: v for k, v in base.items() if k not in ("file", "private")}
        row.update({k: uri(v) for k, v in link.items()})
        fedlex.graph.editions.append(row)


# -- the catalog read back ---------------------------------------------------------------


def without_file(catalog: Catalog) -> int:
    return sum(1 for e in catalog.editions if e.file_url is None)


def test_catalog_read_from_the_endpoint_equals_the_graph(fedlex, served, sleeps):
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert same(catalog, served)  # acts, titles, dates, status, every edition and its file URL
    dsg = catalog.act(DSG)
    assert (dsg.sr_number, dsg.in_force_status, dsg.date_entry_in_force) == ("235.1", 0, date(2023, 9, 1))
    assert dsg.titles["de"].title_short == "DSG" and dsg.titles["fr"].title_short == "LPD"
    assert edition(catalog, DSG + "/20250401", "de").date_end_applicability == date(2025, 7, 6)
    assert edition(catalog, DSG + "/20250707", "fr").file_url == fedlex.url(filestore_path(DSG + "/20250707", "fr", 1))
    assert edition(catalog, DSG + "/20250401", "fr").file_url is None  # listed without a file
    assert len(catalog.editions) == len(served.editions) and c.report.editions_without_file == without_file(served)
    assert c.report.warnings == [] and sleeps == []


def test_every_query_is_distinct_ordered_and_never_uses_offset(fedlex, served, sleeps):
    with client(fedlex, sleeps, page_size=3, batch_size=2) as c:
        catalog = c.fetch_catalog()
    assert same(catalog, served)
    assert len(fedlex.queries) > 6  # small pages and batches really were used
    for q in fedlex.queries:
        assert "SELECT DISTINCT" in q and "OFFSET" not in q.upper() and "ORDER BY STR(" in q and "LIMIT 3" in q
        assert "COUNT(" not in q.upper()
    assert f"<{SR_TYPE}>" in next(q for q in fedlex.queries if "ConsolidationAbstract" in q)
    batches = [q for q in fedlex.queries if "VALUES ?act" in q]
    assert batches and all(q.split("VALUES ?act {", 1)[1].split("}", 1)[0].count("<") <= 2 for q in batches)


def test_manifestation_and_language_hang_off_the_same_expression(fedlex, served, sleeps):
    with client(fedlex, sleeps) as c:
        c.fetch_catalog()
    (q,) = [q for q in fedlex.queries if "isMemberOf" in q]
    assert "?expr jolux:language ?lang" in q and "?expr jolux:isEmbodiedBy ?manif" in q
    assert "jolux:userFormat <https://fedlex.data.admin.ch/vocabulary/user-format/xml>" in q


def test_key_paging_restarts_at_the_last_key_and_loses_no_row(fedlex, served, sleeps):
    # page_size 4 cuts consolidations (up to 4 languages each) in the middle of their rows
    with client(fedlex, sleeps, page_size=4, batch_size=50) as c:
        catalog = c.fetch_catalog()
    assert same(catalog, served)
    starts = [q for q in fedlex.queries if "isMemberOf" in q and 'FILTER(STR(?expr) >= "' in q]
    assert len(starts) >= 5


def test_paging_that_cannot_progress_is_an_error_not_a_loop(fedlex, served, sleeps):
    # Five language rows of one consolidation, pages of two: the page never gets past its key.
    rows = [r for r in fedlex.graph.editions if r["cons"]["value"] == DSG + "/20250707"]
    fedlex.graph.editions = rows + copy.deepcopy(rows)
    for i, r in enumerate(fedlex.graph.editions):
        r["file"] = uri(f"{fedlex.base_url}/f-{i}.xml")
    with client(fedlex, sleeps, page_size=2) as c, pytest.raises(FedlexResponseError, match="key paging is stuck"):
        c.fetch_catalog(elis=[DSG])


def test_duplicate_rows_are_dropped_and_counted(fedlex, served, sleeps):
    g = fedlex.graph
    g.acts, g.titles, g.editions = g.acts * 3, g.titles * 2, g.editions * 3
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert same(catalog, served)
    n_acts, n_editions = len(served.acts), len(served.editions)
    assert len({(e.consolidation, e.lang) for e in catalog.editions}) == len(catalog.editions) == n_editions
    assert c.report.rows_received == 3 * n_acts + 2 * len(g.titles) // 2 + 3 * n_editions
    assert c.report.rows_kept == n_acts + len(g.titles) // 2 + n_editions


def test_restrict_to_sr_numbers_and_languages(fedlex, served, sleeps):
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog(sr_numbers=["235.1", "999.99"], langs=["de", "fr"])
    assert [a.eli for a in catalog.acts] == [DSG]
    assert set(catalog.act(DSG).titles) == {"de", "fr"}
    assert {(e.consolidation.rsplit("/", 1)[1], e.lang) for e in catalog.editions} == {
        (day, lang) for day in ("20230901", "20250401", "20250707") for lang in ("de", "fr")
    }
    assert f'"235.1"^^<{SR_TYPE}>' in fedlex.queries[0]
    assert c.report.warnings == ["SR 999.99: no consolidated act with this SR number on Fedlex"]


def test_restrict_by_eli_and_sr_is_the_union(fedlex, served, sleeps):
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog(sr_numbers=["101"], elis=[PUBLG, DSG + "x"], langs=["de"])
    assert [a.sr_number for a in catalog.acts] == ["101", "170.512"]
    assert c.report.warnings == [f"{DSG}x: not a consolidated act with an SR number on Fedlex"]


def test_a_notation_of_another_type_is_not_an_sr_number(fedlex, served, sleeps):
    # The same string under notation-type `id` names a different act; if the endpoint lets it through, drop it.
    fedlex.graph.acts.append(
        {
            "act": uri("https://fedlex.data.admin.ch/eli/cc/1/2"),
            "sr": lit("235.1", "https://fedlex.data.admin.ch/vocabulary/notation-type/id"),
            "status": uri(STATUS + "0"),
        }
    )
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert [a.eli for a in catalog.acts] == sorted(a.eli for a in served.acts)
    assert "https://fedlex.data.admin.ch/eli/cc/1/2" not in {a.eli for a in catalog.acts}


def test_conflicting_values_keep_one_and_warn(fedlex, served, sleeps):
    extra = dict(fedlex.graph.acts[0], status=uri(STATUS + "1"))
    fedlex.graph.acts.append(extra)
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert catalog.act(DSG).in_force_status == 0
    assert any("inForceStatus: 2 different values" in w for w in c.report.warnings)


def test_act_without_status_is_dropped_with_a_warning(fedlex, served, sleeps):
    del fedlex.graph.acts[0]["status"]
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert DSG not in {a.eli for a in catalog.acts}
    assert c.report.warnings == [f"{DSG}: dropped, no usable jolux:inForceStatus (None)"]


def test_rows_in_an_unknown_language_are_ignored(fedlex, served, sleeps):
    # The query asks for five languages only; if the endpoint answers with another anyway, it is skipped.
    def gsw(query):
        if "titleShort" not in query:
            return None
        reply = fedlex.answer_sparql(query)
        body = json.loads(reply.body)
        body["results"]["bindings"].append(
            {
                "act": uri(DSG),
                "expr": uri(DSG + "/gsw"),
                "lang": uri(LANG_IRI + "GSW"),
                "title": lit("Datenschutzgsetz"),
            }
        )
        return Reply(200, json.dumps(body).encode(), reply.headers)

    fedlex.sparql_fault = gsw
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert same(catalog, served)
    assert c.report.warnings == [
        f"language {LANG_IRI}GSW is not one of ['DEU', 'ENG', 'FRA', 'ITA', 'ROH']; its rows are ignored"
    ]


# -- file links ------------------------------------------------------------------------------


def test_missing_file_link_means_no_file(fedlex, served, sleeps):
    cons = DSG + "/20250707"
    add_edition_rows(fedlex, cons, "it", rows=[{}])  # an XML manifestation without isExemplifiedBy
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert edition(catalog, cons, "it").file_url is None
    assert edition(catalog, cons, "de").file_url is not None
    assert c.report.editions_without_file == without_file(served) + 1


def test_private_link_is_mapped_to_the_public_filestore(fedlex, served, sleeps):
    cons = DSG + "/20250707"
    path = filestore_path(cons, "de", 2)
    add_edition_rows(fedlex, cons, "de", rows=[{"private": PRIVATE_HOST + path}])
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert edition(catalog, cons, "de").file_url == "https://fedlex.data.admin.ch" + path
    assert c.report.private_urls_mapped == 1


def test_private_link_without_filestore_path_is_not_guessed(fedlex, served, sleeps):
    cons = DSG + "/20250707"
    add_edition_rows(fedlex, cons, "de", rows=[{"private": "https://intranet.fedlex.admin.ch/other/x.xml"}])
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert edition(catalog, cons, "de").file_url is None
    assert any("has no /filestore/ path" in w for w in c.report.warnings)


def test_highest_build_wins(fedlex, served, sleeps):
    cons = DSG + "/20250707"
    builds = {n: fedlex.url(filestore_path(cons, "de", n)) for n in (2, 3, 10)}
    # -10 beats -3 numerically (a string comparison would pick -3); a private -3 does not beat a public -10.
    add_edition_rows(
        fedlex,
        cons,
        "de",
        rows=[{"file": builds[2]}, {"file": builds[10]}, {"private": PRIVATE_HOST + filestore_path(cons, "de", 3)}],
    )
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert edition(catalog, cons, "de").file_url == builds[10]


def test_build_number_and_public_url():
    assert build_number("https://x/filestore/a/de/xml/1/cc-2022-491-20250707-de-xml-3.xml") == 3
    assert build_number("https://x/filestore/a/de/xml/cc-2022-491-20250707-de-xml-12.xml?x=1") == 12
    assert build_number("https://x/filestore/a/de/xml/cc-2022-491.xml") == 0
    assert public_url("https://intranet.fedlex.admin.ch/casematesbo/filestore/fedlex.data.admin.ch/eli/a-1.xml") == (
        "https://fedlex.data.admin.ch/filestore/fedlex.data.admin.ch/eli/a-1.xml"
    )
    assert public_url("https://intranet.fedlex.admin.ch/casematesbo/eli/a.xml") is None


# -- HTTP faults ---------------------------------------------------------------------------------


def test_503_then_success_is_retried_with_backoff(fedlex, served, sleeps):
    fedlex.script("/sparqlendpoint", Reply(503, b"busy"), Reply(502, b"bad gateway"))
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert same(catalog, served)
    assert sleeps == [0.5, 1.0]  # exponential, no real waiting
    assert c.report.retries == 2


def test_429_honours_retry_after(fedlex, served, sleeps):
    fedlex.script("/sparqlendpoint", Reply(429, b"slow down", {"Retry-After": "7"}))
    with client(fedlex, sleeps) as c:
        assert same(c.fetch_catalog(), served)
    assert sleeps == [7.0]


def test_retry_after_longer_than_we_wait_fails_at_once(fedlex, served, sleeps):
    fedlex.script("/sparqlendpoint", Reply(429, b"", {"Retry-After": "86400"}))
    with client(fedlex, sleeps) as c, pytest.raises(FedlexHttpError, match="retry after 86400s") as err:
        c.fetch_catalog()
    assert err.value.status == 429 and sleeps == []


def test_retries_are_bounded_and_the_error_names_url_and_purpose(fedlex, served, sleeps):
    fedlex.script("/sparqlendpoint", *[Reply(503, b"down")] * 5)
    with client(fedlex, sleeps) as c, pytest.raises(FedlexHttpError) as err:
        c.fetch_catalog()
    assert fedlex.hits["/sparqlendpoint"] == 3 and sleeps == [0.5, 1.0]
    assert err.value.status == 503 and err.value.url == fedlex.endpoint
    assert err.value.purpose == "list of SR acts" and "gave up after 3 tries" in str(err.value)


def test_timeouts_are_bounded(fedlex, served, sleeps):
    fedlex.script("/sparqlendpoint", *[Reply(delay=1.0)] * 2)
    c = FedlexSparqlClient(
        fedlex.endpoint, sleep=sleeps, timeout=0.1, retry=RetryPolicy(attempts=2, base_delay=0.5, jitter=0)
    )
    with c, pytest.raises(FedlexHttpError, match="ReadTimeout") as err:
        c.fetch_catalog()
    assert fedlex.hits["/sparqlendpoint"] == 2 and sleeps == [0.5] and err.value.status is None


def test_firewall_block_splits_the_batch_and_recovers(fedlex, served, sleeps):
    # The firewall refuses any editions query that names the Constitution together with another act.
    def waf(query):
        if "isMemberOf" in query and f"<{BV}>" in query and query.count("<https://fedlex.data.admin.ch/eli/cc/") > 1:
            return Reply(400, WAF_PAGE, {"Content-Type": "text/html"})
        return None

    fedlex.sparql_fault = waf
    # The three acts of the first sample, so that the split below is the one described.
    keep = {BV, PUBLG, DSG}
    g = fedlex.graph
    g.acts, g.titles, g.editions = (
        [r for r in rows if r["act"]["value"] in keep] for rows in (g.acts, g.titles, g.editions)
    )
    with client(fedlex, sleeps) as c:
        catalog = c.fetch_catalog()
    assert same(
        catalog,
        Catalog(tuple(a for a in served.acts if a.eli in keep), tuple(e for e in served.editions if e.act_eli in keep)),
    )
    # 3 acts -> [BV] + [PublG, DSG]: one split, and no retry of the blocked query itself
    assert c.report.firewall_splits == 1 and sleeps == []
    assert len([q for q in fedlex.queries if "isMemberOf" in q]) == 3  # blocked, [BV], [PublG, DSG]
    assert any("blocked by the web firewall" in w for w in c.report.warnings)


def test_firewall_block_of_a_single_act_is_a_typed_error(fedlex, served, sleeps):
    fedlex.sparql_fault = lambda q: Reply(400, WAF_PAGE, {"Content-Type": "text/html"}) if "titleShort" in q else None
    with client(fedlex, sleeps) as c, pytest.raises(FedlexFirewallError) as err:
        c.fetch_catalog(elis=[DSG])
    assert err.value.status == 400 and err.value.url == fedlex.endpoint
    assert err.value.purpose == f"act titles for <{DSG}>" and "Request Rejected" in str(err.value)


def test_a_real_query_error_is_not_retried_or_split(fedlex, served, sleeps):
    fedlex.sparql_fault = lambda q: Reply(400, b"Parse error: line 3", {"Content-Type": "text/plain"})
    with client(fedlex, sleeps) as c, pytest.raises(FedlexQueryError, match="Parse error") as err:
        c.fetch_catalog()
    assert fedlex.hits["/sparqlendpoint"] == 1 and not isinstance(err.value, FedlexFirewallError)


def test_200_that_is_not_sparql_json_is_a_response_error(fedlex, served, sleeps):
    fedlex.script("/sparqlendpoint", Reply(200, b"<html>maintenance</html>", {"Content-Type": "text/html"}))
    with client(fedlex, sleeps) as c, pytest.raises(FedlexResponseError, match="maintenance"):
        c.fetch_catalog()


def test_one_shot_fetch_catalog(fedlex, served, sleeps):
    assert fetch_catalog(fedlex.endpoint, elis=[DSG], langs=["it"], sleep=sleeps).editions == tuple(
        e for e in served.editions if e.act_eli == DSG and e.lang == "it"
    )


def test_bad_arguments_are_refused_before_any_request(fedlex, sleeps):
    with pytest.raises(ValueError, match="langs"):
        client(fedlex, sleeps).fetch_catalog(langs=["de", "xx"])
    with pytest.raises(ValueError, match="page_size"):
        client(fedlex, sleeps, page_size=20_000)
    with pytest.raises(ValueError, match="not usable as an IRI"):
        client(fedlex, sleeps).fetch_catalog(elis=["https://x/a> } DROP"])
    assert fedlex.queries == []


def test_retry_after_as_http_date():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("12", now) == 12.0
    assert retry_after_seconds("soon", now) is None


def test_dates_with_timezone_and_typed_literal_json(fedlex, served, sleeps):
    for row in fedlex.graph.editions:
        row["date"] = {"type": "typed-literal", "value": row["date"]["value"] + "+02:00", "datatype": XSD_DATE}
    with client(fedlex, sleeps) as c:
        assert same(c.fetch_catalog(), served)


def test_transport_errors_from_a_dead_endpoint(sleeps):
    with httpx.Client() as http:
        # Port 9 (discard) on 127.0.0.1 is closed: connection refused, retried, then a typed error.
        c = FedlexSparqlClient("http://127.0.0.1:9/sparqlendpoint", http=http, sleep=sleeps, retry=FAST_RETRY)
        with pytest.raises(FedlexHttpError, match="ConnectError"):
            c.fetch_catalog()
    assert sleeps == [0.5, 1.0]
