"""A fake Fedlex on 127.0.0.1: a SPARQL endpoint over a small graph built from the real sample, and a filestore.

The endpoint evaluates just enough of the client's queries to be honest about
batching and paging: it honours `VALUES` blocks, the `FILTER(STR(?key) >= "...")`
page start, `ORDER BY` on that key and `LIMIT`. It does NOT apply DISTINCT or
the datatype FILTER, so duplicate rows and foreign notation types reach the
client exactly as a misbehaving endpoint would serve them. Faults are scripted
per request (status, headers, body, delay, truncated body).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from chpit_assets.fedlex.catalog import Catalog, load_sample_catalog
from chpit_assets.retry import RetryPolicy

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
SR_TYPE = "https://fedlex.data.admin.ch/vocabulary/notation-type/id-systematique"
XSD_DATE = "http://www.w3.org/2001/XMLSchema#date"
LANG_IRI = "http://publications.europa.eu/resource/authority/language/"
EU = {"de": "DEU", "fr": "FRA", "it": "ITA", "en": "ENG", "rm": "ROH"}
STATUS = "https://fedlex.data.admin.ch/vocabulary/enforcement-status/"
PRIVATE_HOST = "https://intranet.fedlex.admin.ch/casematesbo"
# The ~9 KB page the Fedlex filestore serves with HTTP 200 for a path it does not have.
HTML_SHELL = (
    b'<!DOCTYPE html><html lang="de"><head><meta charset="utf-8"><title>Fedlex</title>'
    + b'<script src="main.js"></script>' * 300
    + b"</head><body><app-root></app-root></body></html>"
)
WAF_PAGE = b"<html><head><title>Request Rejected</title></head><body>The requested URL was rejected.</body></html>"


def uri(value: str) -> dict:
    return {"type": "uri", "value": value}


def lit(value: str, datatype: str | None = None) -> dict:
    return {"type": "literal", "value": value, **({"datatype": datatype} if datatype else {})}


def date_lit(value: str) -> dict:
    return lit(value, XSD_DATE)


def filestore_path(consolidation: str, lang: str, build: int) -> str:
    """Fedlex's filestore layout: /filestore/fedlex.data.admin.ch/eli/cc/.../<day>/<lang>/xml/<name>-<build>.xml"""
    eli_path = consolidation.split("fedlex.data.admin.ch/", 1)[1]
    name = "fedlex-data-admin-ch-" + eli_path.replace("/", "-") + f"-{lang}-xml-{build}.xml"
    return f"/filestore/fedlex.data.admin.ch/{eli_path}/{lang}/xml/{name}"


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (for client timeouts)
    truncate_to: int | None = None  # announce the full length, send this many bytes, hang up


@dataclass
class Graph:
    """Rows of the three query shapes, as SPARQL JSON bindings."""

    acts: list[dict] = field(default_factory=list)
    titles: list[dict] = field(default_factory=list)
    editions: list[dict] = field(default_factory=list)


def sample_graph(catalog: Catalog, base_url: str) -> tuple[Graph, dict[str, Path]]:
    """The sample catalog as the endpoint would serve it, and filestore path -> real sample file."""
    g = Graph()
    files: dict[str, Path] = {}
    for act in catalog.acts:
        row = {"act": uri(act.eli), "sr": lit(act.sr_number, SR_TYPE), "status": uri(f"{STATUS}{act.in_force_status}")}
        if act.date_entry_in_force:
            row["entry"] = date_lit(act.date_entry_in_force.isoformat())
        if act.date_no_longer_in_force:
            row["noLonger"] = date_lit(act.date_no_longer_in_force.isoformat())
        g.acts.append(row)
        for lang, t in act.titles.items():
            row = {
                "act": uri(act.eli),
                "expr": uri(f"{act.eli}/{lang}"),
                "lang": uri(LANG_IRI + EU[lang]),
                "title": lit(t.title),
            }
            if t.title_short:
                row["short"] = lit(t.title_short)
            g.titles.append(row)
    for e in catalog.editions:
        row = {
            "act": uri(e.act_eli),
            "cons": uri(e.consolidation),
            "expr": uri(f"{e.consolidation}/{e.lang}"),
            "date": date_lit(e.date_applicability.isoformat()),
            "lang": uri(LANG_IRI + EU[e.lang]),
        }
        if e.date_end_applicability:
            row["end"] = date_lit(e.date_end_applicability.isoformat())
        if e.file_url:
            path = filestore_path(e.consolidation, e.lang, 1)
            files[path] = Path(e.file_url.removeprefix("file://"))
            row["file"] = uri(base_url + path)
        g.editions.append(row)
    return g, files


class FakeFedlex:
    def __init__(self) -> None:
        self.graph = Graph()
        self.files: dict[str, bytes] = {}
        self.queries: list[str] = []
        self.hits: Counter[str] = Counter()
        self.scripts: dict[str, list[Reply]] = {}  # path -> replies served before the normal one
        self.sparql_fault: Callable[[str], Reply | None] | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.endpoint = self.base_url + "/sparqlendpoint"
        # A short poll interval: shutdown() waits for one poll, and every test shuts a server down.
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, path: str, *replies: Reply) -> None:
        """Serve these replies, in order, to the next requests for `path`; then the normal answer."""
        self.scripts.setdefault(path, []).extend(replies)

    def url(self, path: str) -> str:
        return self.base_url + path

    # -- evaluation of the client's queries ------------------------------------------------

    def answer_sparql(self, query: str) -> Reply:
        if "jolux:isMemberOf" in query:
            rows, key, head = (
                self.graph.editions,
                "expr",
                ["act", "cons", "expr", "date", "end", "lang", "file", "private"],
            )
        elif "jolux:titleShort" in query:
            rows, key, head = self.graph.titles, "expr", ["act", "expr", "lang", "title", "short"]
        elif "jolux:ConsolidationAbstract" in query:
            rows, key, head = self.graph.acts, "act", ["act", "sr", "status", "entry", "noLonger"]
        else:
            return Reply(400, b"MALFORMED QUERY: unknown shape", {"Content-Type": "text/plain"})
        for var, terms in re.findall(r"VALUES \?(\w+) \{([^}]*)\}", query):
            # Terms are IRIs or typed literals ("235.1"^^<...>); a typed literal counts by its lexical form.
            wanted = {lex or iri for lex, iri in re.findall(r'"((?:[^"\\]|\\.)*)"\^\^<[^>]*>|<([^>]*)>', terms)}
            rows = [r for r in rows if var in r and r[var]["value"] in wanted]
        start = re.search(r"FILTER\(STR\(\?" + key + r'\) >= "((?:[^"\\]|\\.)*)"\)', query)
        if start:
            rows = [r for r in rows if r[key]["value"] >= start.group(1)]
        rows = sorted(rows, key=lambda r: r[key]["value"])
        limit = re.search(r"LIMIT (\d+)", query)
        if limit:
            rows = rows[: int(limit.group(1))]
        body = {"head": {"vars": head}, "results": {"bindings": rows}}
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/sparql-results+json"})

    def _reply(self, path: str, query: str | None) -> Reply:
        with self._lock:
            self.hits[path] += 1
            scripted = self.scripts.get(path)
            if scripted:
                return scripted.pop(0)
        if query is not None:
            if self.sparql_fault is not None:
                fault = self.sparql_fault(query)
                if fault is not None:
                    return fault
            return self.answer_sparql(query)
        if path in self.files:
            return Reply(200, self.files[path], {"Content-Type": "application/xml"})
        return Reply(404, b"not found", {"Content-Type": "text/plain"})

    def _handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes; without NODELAY, Nagle plus
                # delayed ACKs add ~40 ms to every keep-alive request.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                self._serve(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                form = parse_qs(self.rfile.read(length).decode())
                query = form.get("query", [""])[0]
                with fake._lock:
                    fake.queries.append(query)
                self._serve(query)

            def _serve(self, query: str | None) -> None:
                with fake._lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    reply = fake._reply(self.path, query)
                    if reply.delay:
                        threading.Event().wait(reply.delay)
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply.body)))
                    if reply.truncate_to is not None:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    body = reply.body if reply.truncate_to is None else reply.body[: reply.truncate_to]
                    self.wfile.write(body)
                    self.wfile.flush()
                    if reply.truncate_to is not None:
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test); nothing to answer
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

        return Handler


@pytest.fixture
def fedlex():
    fake = FakeFedlex()
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture(scope="session")
def sample_catalog() -> Catalog:
    return load_sample_catalog(SAMPLE)


@pytest.fixture
def served(fedlex: FakeFedlex, sample_catalog: Catalog) -> Catalog:
    """The sample's graph and files on the fake; returns the catalog the client should read back."""
    graph, files = sample_graph(sample_catalog, fedlex.base_url)
    fedlex.graph = graph
    fedlex.files = {path: src.read_bytes() for path, src in files.items()}
    by_file = {str(src.resolve().as_uri()): fedlex.url(path) for path, src in files.items()}
    return Catalog(
        sample_catalog.acts,
        tuple(replace(e, file_url=by_file.get(e.file_url), sha256=None) for e in sample_catalog.editions),
    )


class Sleeps(list):
    """Records requested pauses instead of sleeping (tests never really wait on backoff)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


# No jitter, so the recorded backoff is exactly base * 2**n.
FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.5, max_delay=4.0, jitter=0.0)
