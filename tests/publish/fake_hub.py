"""A loopback stand-in for the Hugging Face Hub API, enough for `create_repo` + `upload_folder`.

It answers the calls an upload makes -- create the repo, validate the README's YAML header (here:
it must parse and carry `license` and `configs`, else HTTP 400 as the Hub answers), ask each
file's upload mode (`preupload`), and the commit (NDJSON: a header line, then one line per file with its content in
base64) -- and keeps what it received, so a test can compare the committed files with the
published folder byte for byte. Every file is answered with upload mode "regular" (inline in the
commit) so no LFS/Xet storage has to be faked. Nothing here reaches the internet.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml


@dataclass
class Commit:
    repo: str
    revision: str
    summary: str
    files: dict[str, bytes]
    token: str


@dataclass
class FakeHub:
    fail_commits: bool = False  # answer every commit with HTTP 403 (not retried, unlike a 5xx)
    repos: list[str] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # every request as "METHOD path", in order

    def __post_init__(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_POST(self):
                hub.paths.append(f"POST {self.path}")
                body = self._body()
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts[:3] == ["api", "repos", "create"]:
                    request = json.loads(body)
                    hub.repos.append(f"{request.get('organization') or 'user'}/{request['name']}:{request.get('type')}")
                    return self._send(200, {"url": f"{hub.url}/datasets/{request['organization']}/{request['name']}"})
                if parts == ["api", "validate-yaml"]:
                    content = json.loads(body)["content"]
                    try:
                        meta = yaml.safe_load(content.split("---")[1])
                    except (IndexError, yaml.YAMLError) as exc:
                        return self._send(400, {"errors": [{"message": f"no YAML header: {exc}"}]})
                    missing = [k for k in ("license", "configs") if k not in (meta or {})]
                    if missing:
                        return self._send(400, {"errors": [{"message": f"missing {missing}"}]})
                    return self._send(200, {"errors": [], "warnings": []})
                if parts[:2] == ["api", "datasets"] and parts[4] == "preupload":
                    files = json.loads(body)["files"]
                    return self._send(
                        200,
                        {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]},
                    )
                if parts[:2] == ["api", "datasets"] and parts[4] == "commit":
                    if hub.fail_commits:
                        return self._send(
                            403, {"error": "the fake hub refuses this commit (token without write access)"}
                        )
                    lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                    header = next(line["value"] for line in lines if line["key"] == "header")
                    files = {
                        line["value"]["path"]: base64.b64decode(line["value"]["content"])
                        for line in lines
                        if line["key"] == "file"
                    }
                    token = self.headers.get("authorization", "").removeprefix("Bearer ")
                    hub.commits.append(Commit(f"{parts[2]}/{parts[3]}", parts[5], header["summary"], files, token))
                    oid = f"{len(hub.commits):040x}"
                    return self._send(
                        200, {"commitUrl": f"{hub.url}/datasets/{parts[2]}/{parts[3]}/commit/{oid}", "commitOid": oid}
                    )
                self._send(404, {"error": f"the fake hub does not know POST {self.path}"})

            def do_GET(self):
                hub.paths.append(f"GET {self.path}")
                self._send(404, {"error": f"the fake hub does not know GET {self.path}"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
