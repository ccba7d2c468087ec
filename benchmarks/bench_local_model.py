"""Latency of the local SmolLM2 server and of the point-in-time tools, measured on this machine.

    .venv/bin/python benchmarks/bench_local_model.py [--requests 5] [--threads 2]

Model: sequential chat completions at temperature 0 with a pit-shaped prompt (the card's R1b system
prompt, a real DSG article as context), one request at a time on one slot. Tools: one
ch_get_act_article call on the ingested sample, alone (own connection) and inside a session.
The load average is printed with the figures: the two cores are shared, and llama.cpp's threads
slow down sharply when another process competes for them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

import httpx

from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.local_model import LocalModelServer

SYSTEM = (
    "You are a Swiss legal database. The user asks for the verbatim text of an article as in force on a given "
    "date. A retrieved article text is provided between <context> tags. Answer with the verbatim article "
    "text from the context, in the language of the question, nothing else."
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="chpit-bench-"))
    store = Store(root / "chpit.duckdb")
    ingest_language(store, load_sample_catalog(Path("data/fedlex-sample")), "de", root / "cache")
    tools = PitTools(store, today=date(2025, 9, 1))

    n = 50
    start = time.perf_counter()
    for _ in range(n):
        article = tools.ch_get_act_article("235.1", "24", "de", as_of="2024-01-01")
    alone = (time.perf_counter() - start) / n
    with tools.session():
        start = time.perf_counter()
        for _ in range(n):
            tools.ch_get_act_article("235.1", "24", "de", as_of="2024-01-01")
        shared = (time.perf_counter() - start) / n
    print(f"tool ch_get_act_article: {alone * 1000:.1f} ms per call alone, {shared * 1000:.1f} ms in a session")

    question = "Wie lautet Art. 24 DSG (SR 235.1) am 1. Januar 2024?"
    body = {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{question}\n\n<context>\n{article.text}\n</context>"},
        ],
        "temperature": 0,
        "max_tokens": args.max_tokens,
    }
    start = time.perf_counter()
    with LocalModelServer(threads=args.threads) as llm:
        print(f"model {llm.model}: up in {time.perf_counter() - start:.1f} s, threads={args.threads}")
        latencies, tokens = [], []
        for _ in range(args.requests):
            t = time.perf_counter()
            reply = httpx.post(
                f"{llm.base_url}/v1/chat/completions", json={"model": llm.model, **body}, timeout=600
            ).json()
            latencies.append(time.perf_counter() - t)
            tokens.append(reply["usage"]["completion_tokens"])
        usage = reply["usage"]
    print(
        f"prompt {usage['prompt_tokens']} tokens, answer {statistics.median(tokens):.0f} tokens; latency per "
        f"request: median {statistics.median(latencies):.2f} s, min {min(latencies):.2f} s, "
        f"max {max(latencies):.2f} s over {args.requests}; load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
