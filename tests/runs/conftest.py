"""Fixtures for the runs tests: the real sample build, point-in-time tools over it, a scripted
loopback chat server, and the real local SmolLM2 server (one per session). Nothing reaches the internet."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chpit_assets.corpus.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
TODAY = date(2026, 9, 4)  # fixed "today" for recite/current, so labels do not drift with the calendar


@dataclass
class SampleBuild:
    store: Store
    build_dir: Path
    items: dict[str, list[dict]]  # lang -> bench items (the sample's core is all of them)


def build_sample(root: Path) -> SampleBuild:
    """Ingest the shipped Fedlex sample and run the builder over it, as the assets do."""
    from chpit_assets.bench.changes import build_changes
    from chpit_assets.bench.eligibility import evaluate, write_eligible
    from chpit_assets.bench.items import (
        BuildSettings,
        build_items,
        write_core,
        write_items,
    )
    from chpit_assets.corpus.ingest import ingest_language
    from chpit_assets.fedlex.catalog import load_sample_catalog

    store = Store(root / "chpit.duckdb")
    catalog = load_sample_catalog(SAMPLE)
    items = {}
    for lang in ("de", "fr", "it"):
        ingest_language(store, catalog, lang, root / "cache")
        build_changes(store, lang)
        write_eligible(store, evaluate(store, lang, ("fedlex",)))
        path = write_items(store, root / "build", build_items(store, lang, BuildSettings(), []))
        items[lang] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        write_core(store, root / "build", lang)
    return SampleBuild(store, root / "build", items)


@pytest.fixture(scope="session")
def sample(tmp_path_factory) -> SampleBuild:
    return build_sample(tmp_path_factory.mktemp("sample"))


@pytest.fixture
def tools(sample):
    from chpit_assets.pit.tools import PitTools

    return PitTools(sample.store, today=TODAY)


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict] | None = None,
    finish_reason: str = "stop",
    model: str = "scripted-model-1",
    provider: str | None = None,
    cost: float | None = None,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
) -> dict:
    """An OpenAI chat-completions response body."""
    message: dict = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage: dict = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cost is not None:
        usage["cost"] = cost
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage,
    }
    if provider:
        body["provider"] = provider
    return body


def tool_call(name: str, arguments: dict | str, call_id: str = "call_1") -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
    }


Responder = Callable[[dict], "tuple[int, dict | str]"]


class ScriptedServer:
    """A stdlib HTTP server on 127.0.0.1 answering chat completions with `respond(request_body)`.

    Every request body is recorded in `hits` (in arrival order), so tests can count what was asked."""

    def __init__(self, respond: Responder):
        self.respond = respond
        self.hits: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def _send(self, status: int, body: dict | str, headers: dict | None = None) -> None:
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"object": "list", "data": [{"id": "scripted-model-1"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    outer.hits.append(body)
                status, reply, *headers = outer.respond(body)  # (status, body[, headers])
                try:
                    self._send(status, reply, *headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test): nothing to answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted():
    servers: list[ScriptedServer] = []

    def start(respond: Responder) -> ScriptedServer:
        servers.append(ScriptedServer(respond))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def local_model():
    """The real SmolLM2-135M server, started once per session (issue 5 point 4)."""
    from chpit_assets.runs.local_model import LocalModelServer

    with LocalModelServer(parallel=2) as server:  # two slots: the two-worker test runs in parallel
        yield server
