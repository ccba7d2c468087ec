"""A loopback stand-in for the Hugging Face Hub's READ side: what huggingface_hub's
`dataset_info` and `snapshot_download` ask for, serving a folder as one dataset commit.

Routes (the ones huggingface_hub 2.4 requests, see hf_api.py and file_download.py):
- GET  /api/datasets/{repo}/revision/{rev}         repo info: `sha` (the commit) and `siblings`
- GET  /api/datasets/{repo}/tree/{rev}[?recursive]  the file list (`type`, `path`, `size`, `oid`)
- HEAD/GET /datasets/{repo}/resolve/{rev}/{path}     the bytes, with X-Repo-Commit, ETag and
  Content-Length; a `Range: bytes=N-` request is answered 206 with Content-Range (resume)
An unknown repo or revision is a 404 with the Hub's X-Error-Code. Every request is recorded with
its Authorization header, and `cut_after` makes the next GET of a file send only its first N bytes
and drop the connection (an interrupted download). Nothing here reaches the internet.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class ReadHub:
    repo: str
    folder: Path
    revision: str
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, auth)
    cut_after: dict[str, int] = field(default_factory=dict)  # file -> bytes sent before the drop

    def files(self) -> dict[str, bytes]:
        return {
            p.relative_to(self.folder).as_posix(): p.read_bytes() for p in sorted(self.folder.rglob("*")) if p.is_file()
        }

    def __post_init__(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _json(self, status: int, body, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _route(self):
                hub.requests.append((self.command, self.path, self.headers.get("Authorization")))
                path = unquote(urlsplit(self.path).path)
                prefix_api, prefix_file = f"/api/datasets/{hub.repo}/", f"/datasets/{hub.repo}/resolve/"
                if not path.startswith((prefix_api, prefix_file)):
                    return self._json(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
                if path.startswith(prefix_api):
                    kind, _, rest = path[len(prefix_api) :].partition("/")
                    rev = rest.split("/", 1)[0]
                    if rev not in (hub.revision, COMMIT):
                        return self._json(404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"})
                    files = hub.files()
                    if kind == "revision":
                        return self._json(
                            200, {"id": hub.repo, "sha": COMMIT, "siblings": [{"rfilename": p} for p in files]}
                        )
                    if kind == "tree":
                        entries = [
                            {"type": "file", "path": p, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                            for p, b in files.items()
                        ]
                        return self._json(200, entries)
                    return self._json(404, {"error": "no such route"})
                rev, _, rel = path[len(prefix_file) :].partition("/")
                if rev not in (hub.revision, COMMIT):
                    return self._json(404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"})
                data = hub.files().get(rel)
                if data is None:
                    return self._json(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
                start = 0
                wanted = self.headers.get("Range", "")
                if wanted.startswith("bytes="):
                    start = int(wanted[len("bytes=") :].split("-")[0] or 0)
                body = data[start:]
                self.send_response(206 if start else 200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha1(data).hexdigest()}"')
                self.send_header("Content-Length", str(len(body)))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if self.command == "HEAD":
                    return
                cut = hub.cut_after.pop(rel, None)
                if cut is not None:
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            do_GET = do_HEAD = _route

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
