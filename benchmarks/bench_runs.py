"""Measure the runs: answers/s with 1, 2 and 4 workers against the local SmolLM2 server, and the
time to score and report a 1,500-answer run. Prints markdown (the record: --write docs/benchmarks.md).

    .venv/bin/python benchmarks/bench_runs.py [--answers 8] [--max-tokens 32] [--report-answers 1500]
        [--write docs/benchmarks.md]
    .venv/bin/python benchmarks/bench_runs.py --smoke DIR   # 1 worker, 1 answer (+1 warm-up), files under DIR

Offline: the corpus is the shipped Fedlex sample, the model the local server (one llama.cpp slot
per worker). The 1,500 answers for the scoring figure are real article texts of the sample
(gold, distractor, or a cut-down gold, in rotation), so every scorer path is exercised.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import absolute, emit, machine, record  # noqa: E402
from chpit_assets.report import build_report, write_report  # noqa: E402
from chpit_assets.runs.client import ChatClient, EndpointConfig  # noqa: E402
from chpit_assets.runs.local_model import LocalModelServer  # noqa: E402
from chpit_assets.runs.runner import run_items, scored_view  # noqa: E402
from chpit_assets.runs.systems import build_system  # noqa: E402
from tests.runs.conftest import build_sample  # noqa: E402


def answers_per_second(items: list[dict], workers: int, max_tokens: int, root: Path) -> tuple[float, float]:
    with LocalModelServer(parallel=workers) as server:
        config = EndpointConfig(
            f"{server.base_url}/v1", server.model, max_tokens=max_tokens, retry_max_tokens=max_tokens
        )
        with ChatClient(config) as client:
            system = build_system("smollm2-135m/closed", clients={"smollm2-135m": client})
            run_items(system, items[:1], root / f"warm-{workers}.jsonl")  # load and warm the model once
            t0 = time.perf_counter()
            summary = run_items(system, items, root / f"w{workers}.jsonl", workers=workers)
            seconds = time.perf_counter() - t0
    assert summary.errors == 0, f"{summary.errors} errors with {workers} workers"
    return len(items) / seconds, seconds


def score_and_report(sample_items: list[dict], n: int, root: Path) -> tuple[float, float]:
    """Seconds to scored-view (re-score) n answers, then to build and write the report."""
    items, log = [], {}
    for i in range(n):
        base = sample_items[i % len(sample_items)]
        item = {**base, "id": f"{i:016x}", "lang": ("de", "fr", "it")[i % 3]}
        answer = (
            base["gold"]["text"],
            base["distractor"]["text"],
            base["gold"]["text"][: len(base["gold"]["text"]) // 2],
        )[i % 3]
        items.append(item)
        log[item["id"]] = {"id": item["id"], "answer": answer, "error": None, "tool_calls": []}
    t0 = time.perf_counter()
    lines, missing = scored_view(items, log, "bench/pit")
    scored_s = time.perf_counter() - t0
    assert not missing
    t0 = time.perf_counter()
    write_report(build_report({"bench/pit": lines}), root / "report")
    return scored_s, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--report-answers", type=int, default=1500)
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="one worker, one answer, every file under DIR")
    args = parser.parse_args(argv)
    worker_counts: tuple[int, ...] = (1, 2, 4)
    if args.smoke:
        args.answers, args.max_tokens, args.report_answers, worker_counts = 1, 8, 30, (1,)
        args.smoke.mkdir(parents=True, exist_ok=True)
        tempfile.tempdir = str(args.smoke)  # the sample build, the logs and the server's log
    root = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    sample = build_sample(root)
    base = sample.items["de"]
    items = [
        {**base[i % len(base)], "id": f"{i:016x}", "question": f"({i}) {base[i % len(base)]['question']}"}
        for i in range(args.answers)
    ]

    rows = []
    for workers in worker_counts:
        rate, seconds = answers_per_second(items, workers, args.max_tokens, root)
        rows.append((workers, rate, seconds))
    scored_s, report_s = score_and_report(base, args.report_answers, root)

    lines = [
        f"Local SmolLM2-135M (llama.cpp, 2 threads, one slot per worker), closed mode, {args.answers} answers, "
        f"max_tokens {args.max_tokens}.\n",
        "| workers | answers/s | seconds | speed-up vs 1 |\n|---|---|---|---|",
        *(f"| {w} | {rate:.2f} | {seconds:.1f} | {rate / rows[0][1]:.2f}x |" for w, rate, seconds in rows),
        f"\nScore a {args.report_answers}-answer run (scored view, fast scorer): {scored_s:.2f} s; "
        f"build and write the report (md, json, html): {report_s:.2f} s.",
    ]
    body = "\n".join(lines)
    print(machine() + "\n")
    print(body)
    if args.write:
        record(args.write, "Runs: answers per second and scoring", body)
    emit(
        "bench_runs",
        {
            "answers_per_s": {str(w): round(rate, 3) for w, rate, _ in rows},
            "score_s": round(scored_s, 3),
            "report_s": round(report_s, 3),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
