"""The local SmolLM2 server (issue 5 point 4): real llama.cpp, loopback only, no network."""

from __future__ import annotations

import os
import time

import httpx
import pytest

from chpit_assets.runs.local_model import (
    LocalModelError,
    LocalModelServer,
    ServeOptions,
    smollm2_gguf,
)

REQUEST = {
    "messages": [
        {
            "role": "system",
            "content": "You are a Swiss legal database. Answer with the verbatim text of the "
            "requested article, nothing else.",
        },
        {"role": "user", "content": "Wie lautet Art. 1 DSG (SR 235.1) am 1. Januar 2024?"},
    ],
    "temperature": 0,
    "max_tokens": 32,
}


@pytest.fixture
def llm(local_model):
    """The session's one model server (tests/runs/conftest.py)."""
    return local_model


def _chat(llm: LocalModelServer) -> tuple[dict, float]:
    start = time.perf_counter()
    response = httpx.post(f"{llm.base_url}/v1/chat/completions", json={"model": llm.model, **REQUEST}, timeout=300)
    response.raise_for_status()
    return response.json(), time.perf_counter() - start


def test_the_model_ships_in_its_wheel():
    path = smollm2_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_serves_on_loopback_and_names_its_model(llm):
    assert llm.base_url.startswith("http://127.0.0.1:")
    assert llm.model == "SmolLM2-135M-Instruct.Q4_1"
    listed = httpx.get(f"{llm.base_url}/v1/models", timeout=10).json()
    assert [m["id"] for m in listed["data"]] == [llm.model]
    assert len(llm.model_sha256) == 64


def test_chat_completion_at_temperature_0_is_real_and_repeatable(llm):
    first, t1 = _chat(llm)
    second, t2 = _chat(llm)
    text = first["choices"][0]["message"]["content"]
    assert first["choices"][0]["message"]["role"] == "assistant" and text.strip()
    assert first["model"] == llm.model
    assert first["usage"]["prompt_tokens"] > 20 and first["usage"]["completion_tokens"] > 0
    assert second["choices"][0]["message"]["content"] == text
    print(f"\nlocal model latency: {t1:.2f} s, {t2:.2f} s for {first['usage']['completion_tokens']} tokens")


def test_stop_ends_the_child_process():
    server = LocalModelServer(ctx_size=512, threads=1)
    server.start()
    pid, url = server._proc.pid, server.base_url
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/health", timeout=2)
    assert server.base_url is None


def test_a_broken_model_file_fails_with_the_servers_log(tmp_path):
    bogus = tmp_path / "broken.gguf"
    bogus.write_bytes(b"not a gguf file")
    with pytest.raises(LocalModelError, match="did not start") as exc:
        LocalModelServer(ServeOptions(model_path=bogus), startup_timeout=60).start()
    assert "log tail" in str(exc.value)
