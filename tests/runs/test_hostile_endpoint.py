"""Issue 23 item 8: endpoints that misbehave on purpose, served from 127.0.0.1 by the test.

A trickling endpoint must not hold one call past `--timeout`; one that echoes the credentials it
was sent must not get them into result lines; a key in `--api-key-env` is sent even when the base
URL carries `user:pass@`."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chpit_assets.runs.client import MAX_RESPONSE_BYTES, NO_RETRY, REDACTED, ChatClient, EndpointConfig
from chpit_assets.runs.errors import ModelCallError
from chpit_assets.runs.runner import prepare_system, read_log, run_items

from .conftest import completion

MESSAGES = [{"role": "user", "content": "Wie lautet Art. 24 DSG?"}]


class Endpoint:
    """A loopback chat endpoint whose answer is `reply(request) -> (bytes, seconds between bytes[,
    HTTP status])`, `request` being the handler (its `headers`, its `path`, its `endpoint`)."""

    def __init__(self, reply, models=lambda request: (b"{}", 0, 200)):
        self.seen: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            endpoint = outer

            def log_message(self, *args):
                pass

            def do_GET(self):
                data, _, status = models(self)
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.seen.append(dict(self.headers))
                data, gap, *status = reply(self)
                self.send_response(*status or [200])
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for i in range(0, len(data), 1 if gap else len(data)):
                        self.wfile.write(data[i : i + 1] if gap else data)
                        self.wfile.flush()
                        time.sleep(gap)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def endpoint():
    started = []

    def start(reply):
        started.append(Endpoint(reply))
        return started[-1]

    yield start
    for e in started:
        e.close()


def test_a_trickling_endpoint_is_cut_off_at_the_timeout_for_the_whole_request(endpoint):
    # One byte every 50 ms: each read is quick, so a per-read timeout never fires; the body takes ~10 s.
    server = endpoint(lambda request: (json.dumps(completion("x" * 150)).encode(), 0.05))
    client = ChatClient(EndpointConfig(server.base_url, "m", timeout_s=1.0, retry=NO_RETRY), sleep=lambda s: None)
    started = time.monotonic()
    with pytest.raises(ModelCallError, match=r"whole request took over --timeout 1 s"):
        client.chat(MESSAGES)
    assert time.monotonic() - started < 2.5


def test_an_answer_over_the_size_limit_is_refused(endpoint, monkeypatch):
    from chpit_assets.runs import client as client_module

    body = json.dumps(completion("x" * 5000)).encode()
    monkeypatch.setattr(client_module, "MAX_RESPONSE_BYTES", 1000)
    server = endpoint(lambda request: (body, 0))
    with pytest.raises(ModelCallError, match="over 1000 bytes"):
        ChatClient(EndpointConfig(server.base_url, "m", retry=NO_RETRY)).chat(MESSAGES)
    assert MAX_RESPONSE_BYTES >= 1024 * 1024


def test_user_info_in_the_base_url_does_not_drop_the_api_key(endpoint, monkeypatch):
    server = endpoint(lambda request: (json.dumps(completion("x")).encode(), 0))
    monkeypatch.setenv("CHPIT_TEST_KEY", "sk-from-env")
    url = server.base_url.replace("http://", "http://bob:pw@")
    ChatClient(EndpointConfig(url, "m", api_key_env="CHPIT_TEST_KEY")).chat(MESSAGES)
    assert server.seen[0]["Authorization"] == "Bearer sk-from-env"


def _echo(request) -> tuple[bytes, float]:
    """Everything it was sent, back in the answer, the served model's name and the provider."""
    auth = request.headers.get("Authorization", "")
    token = auth.split(" ", 1)[-1]
    decoded = base64.b64decode(token).decode() if auth.startswith("Basic ") else token
    body = completion(
        f"Ihr Schlüssel: {auth} / {decoded}",
        model=f"vendor/m?api_key={decoded}&other_key=sk-unknown",
        provider=f"proxy {token}",
    )
    return json.dumps(body).encode(), 0


@pytest.mark.parametrize("how", ["bearer", "basic"])
def test_credentials_an_endpoint_echoes_never_reach_a_result_line(endpoint, monkeypatch, tmp_path, how):
    server = endpoint(_echo)
    monkeypatch.setenv("CHPIT_TEST_KEY", "sk-echo-me-123")
    if how == "bearer":
        config = EndpointConfig(server.base_url, "m", api_key_env="CHPIT_TEST_KEY", retry=NO_RETRY)
        secrets = ["sk-echo-me-123"]
    else:
        config = EndpointConfig(server.base_url.replace("http://", "http://alice:pa55word@"), "m", retry=NO_RETRY)
        secrets = ["pa55word", base64.b64encode(b"alice:pa55word").decode()]
    item = {"id": "de-1", "lang": "de", "question": "q?", "gold": {"text": "1 Text."}, "distractor": {"text": "x"}}
    system = prepare_system("m/closed", [item], endpoints={"m": config})
    log = tmp_path / "de.jsonl"
    run_items(system, [item], log)
    written = log.read_text(encoding="utf-8")
    assert server.seen, "the endpoint was asked"
    for secret in secrets + ["sk-unknown"]:
        assert secret not in written
    (line,) = read_log(log)
    assert REDACTED in line["answer"] and line["served_model"].startswith(f"vendor/m?api_key={REDACTED}")
    assert "other_key=REDACTED" in line["served_model"]


PLANTED = {"user": "u-PLANTED-4f2a", "password": "pw-PLANTED-b81d", "query": "q-PLANTED-0c9e", "key": "sk-PLANTED-e3a7"}


def _said(request) -> str:
    """The credentials a request carried: its Authorization header, Basic decoded, its path and query."""
    auth = request.headers.get("Authorization", "")
    token = auth.split(" ", 1)[-1]
    decoded = base64.b64decode(token).decode() if auth.startswith("Basic ") else token
    return f"{auth} | {decoded} | {request.path}"


def _echo_everything(request) -> tuple[bytes, float, int]:
    """Every other answer an error (the first one too): both repeat the request's credentials in
    their text, the served model's name (`?api_key=`) and the provider."""
    said = _said(request)
    if len(request.endpoint.seen) % 2:
        return json.dumps({"error": {"message": f"rejected: {said}", "code": 400}}).encode(), 0, 400
    body = completion(f"1 {said}", model=f"vendor/m?api_key={said}", provider=f"proxy {said}")
    return json.dumps(body).encode(), 0, 200


def _refuse_with_echo(request) -> tuple[bytes, float, int]:
    return json.dumps({"error": {"message": f"rejected: {_said(request)}"}}).encode(), 0, 401


@pytest.mark.parametrize("how", ["bearer", "basic", "refused"])
def test_credentials_an_endpoint_echoes_never_reach_the_dagster_instance_or_its_compute_logs(tmp_path, how):
    """Issue 23 item 8: the whole CLI path (a backfill, each run in its own process, compute logs
    captured) against a loopback endpoint echoing every credential it was sent, in answers and in
    error bodies, or refusing the pre-flight with an echo (a STEP_FAILURE). Afterwards no secret,
    nor its base64 `user:pass`, is anywhere in the Dagster home (run and event-log sqlite, compute
    logs), the data folder or what the CLI printed."""
    from tests.test_cli import run_cli

    server = Endpoint(_echo_everything, **({"models": _refuse_with_echo} if how == "refused" else {}))
    userinfo = f"{PLANTED['user']}:{PLANTED['password']}"
    url = server.base_url.replace("http://", f"http://{userinfo}@")
    env = {}
    if how != "basic":  # the key from the environment wins over the user info (sent as Bearer)
        url += f"?key={PLANTED['query']}"
        env = {"CHPIT_PLANTED_KEY": PLANTED["key"]}
    args = ["--systems", "echo/closed", "--model-slug", "echo", "--base-url", url, "--limit", "3"]
    try:
        done = run_cli(tmp_path, *args, *(["--api-key-env", "CHPIT_PLANTED_KEY"] if env else []), **env)
    finally:
        server.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".db" for p in files) and any("compute_logs" in p.parts for p in files)
    if how == "refused":
        assert done.returncode == 1 and "EndpointUnreachableError" in done.stderr, done.stdout + done.stderr
        assert not server.seen  # refused before any question
    else:
        assert len(server.seen) == 3, done.stdout + done.stderr
        sent = server.seen[0]["Authorization"]
        assert sent == (f"Bearer {PLANTED['key']}" if how == "bearer" else f"Basic {_b64(userinfo)}")
        assert done.returncode == 1, done.stdout + done.stderr  # some items errored (the 400s)
        assert "echo/closed [de]: 1 answered, 2 errored" in done.stdout, done.stdout
        # The echoed error body did reach the event log (the results' metadata: the commonest error).
        assert any(p.suffix == ".db" and "home" in p.parts and b"rejected: " in p.read_bytes() for p in files)
    secrets = [PLANTED["user"], PLANTED["password"], _b64(userinfo)] + (
        [PLANTED["key"], PLANTED["query"]] if how != "basic" else []
    )
    for secret in secrets:
        assert secret not in done.stdout + done.stderr, secret
        leaks = [str(p.relative_to(tmp_path)) for p in files if secret.encode() in p.read_bytes()]
        assert not leaks, (secret, leaks)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")
