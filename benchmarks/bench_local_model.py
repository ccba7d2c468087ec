"""Latency of the local SmolLM2 server and of the point-in-time tools, measured on this machine.

    .venv/bin/python benchmarks/bench_local_model.py [--requests 5] [--threads 2] [--write docs/benchmarks.md]
    .venv/bin/python benchmarks/bench_local_model.py --smoke DIR   # one request of 8 tokens, files under DIR

Model: sequential chat completions at temperature 0 with a pit-shaped prompt (the card's R1b system
prompt, a real DSG article as context), one request at a time on one slot. Tools: one
ch_get_act_article call on the ingested sample, alone (own connection) and inside a session.
The load average is printed with the figures: the two cores are shared, and llama.cpp's threads
slow down sharply when another process competes for them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, machine, record, spread, spread_text  # noqa: E402
from chpit_assets.corpus.ingest import ingest_language  # noqa: E402
from chpit_assets.corpus.store import Store  # noqa: E402
from chpit_assets.fedlex.catalog import load_sample_catalog  # noqa: E402
from chpit_assets.pit.tools import PitTools  # noqa: E402
from chpit_assets.runs.local_model import LocalModelServer  # noqa: E402

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
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="one short request, every file under DIR")
    args = parser.parse_args()
    n = 50
    if args.smoke:
        args.requests, args.max_tokens, n = 1, 8, 5
        args.smoke.mkdir(parents=True, exist_ok=True)
        tempfile.tempdir = str(args.smoke)  # the store and the server's log

    print(machine())
    root = Path(tempfile.mkdtemp(prefix="chpit-bench-"))
    store = Store(root / "chpit.duckdb")
    ingest_language(store, load_sample_catalog(ROOT / "data" / "fedlex-sample"), "de", root / "cache")
    tools = PitTools(store, today=date(2025, 9, 1))

    start = time.perf_counter()
    for _ in range(n):
        article = tools.ch_get_act_article("235.1", "24", "de", as_of="2024-01-01")
    alone = (time.perf_counter() - start) / n
    with tools.session():
        start = time.perf_counter()
        for _ in range(n):
            tools.ch_get_act_article("235.1", "24", "de", as_of="2024-01-01")
        shared = (time.perf_counter() - start) / n
    lines = [f"tool ch_get_act_article: {alone * 1000:.1f} ms per call alone, {shared * 1000:.1f} ms in a session"]
    print(lines[-1], flush=True)

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
        up_s = time.perf_counter() - start
        lines.append(f"model {llm.model}: up in {up_s:.1f} s, threads={args.threads}")
        print(lines[-1], flush=True)
        latencies, tokens = [], []
        for _ in range(args.requests):
            t = time.perf_counter()
            reply = httpx.post(
                f"{llm.base_url}/v1/chat/completions", json={"model": llm.model, **body}, timeout=600
            ).json()
            latencies.append(time.perf_counter() - t)
            tokens.append(reply["usage"]["completion_tokens"])
        usage = reply["usage"]
    lines.append(
        f"prompt {usage['prompt_tokens']} tokens, answer {statistics.median(tokens):.0f} tokens (max_tokens "
        f"{args.max_tokens}); latency per request: {spread_text(latencies)}"
    )
    print(lines[-1])
    if args.write:
        record(args.write, "Local SmolLM2 server and the point-in-time tools", "\n".join(f"- {x}" for x in lines))
    emit(
        "bench_local_model",
        {
            "tool_ms_alone": round(alone * 1000, 2),
            "tool_ms_in_session": round(shared * 1000, 2),
            "server_up_s": round(up_s, 2),
            "latency_s": {k: round(v, 3) for k, v in spread(latencies).items()},
            "completion_tokens": statistics.median(tokens),
        },
    )


if __name__ == "__main__":
    main()
