"""Runs: one system over a set of items, resumable, one scored line per item (R3).

The run log `data/results/{system}/{lang}.jsonl` is append-only and flushed per
line. On restart every id that already has a line is skipped, so an interrupted
run never re-asks an answered item; `retry_errors=True` re-asks the ids whose
latest line is an error (the newer line wins, nothing is rewritten). The log is
written by the main thread only, so parallel workers never interleave lines.

`scored_view` turns a log into the deterministic per-item view the report reads:
latest line per id, in item order, re-scored with the installed scorer.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from chpit_scorer import score

from ..files import write_atomic
from .errors import RunError
from .receipts import receipt, utc_now
from .systems import Answer, System

VERDICT_FIELDS = ("label", "gold_coverage", "distractor_coverage", "distractor_all_coverage", "shared_coverage")
# Item fields the report needs next to each verdict (R4), copied into the scored view.
ITEM_FIELDS = ("id", "lang", "act_id", "sr_number", "article_number", "e_id", "as_of", "kind", "gold_is_current", "recite_label")


def results_path(results_dir: Path | str, system_key: str, lang: str) -> Path:
    """`{results_dir}/{system}/{lang}.jsonl`; a key's `/` becomes a subfolder (ARCHITECTURE "Outputs")."""
    parts = system_key.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise RunError(f"system key {system_key!r} cannot be a results path")
    return Path(results_dir, *parts, f"{lang}.jsonl")


def scored_path(results_dir: Path | str, system_key: str, lang: str) -> Path:
    return results_path(results_dir, system_key, lang).with_suffix(".scored.jsonl")


def read_jsonl(path: Path | str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _repair_torn_tail(path: Path) -> None:
    """A run killed mid-write leaves a partial last line: cut it, that item was not answered."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        data = fh.read()
        if data.endswith(b"\n"):
            return
        fh.truncate(data.rfind(b"\n") + 1)


def load_log(path: Path | str) -> dict[str, dict]:
    """Latest line per item id of a run log (later lines supersede earlier ones)."""
    path = Path(path)
    if not path.exists():
        return {}
    latest: dict[str, dict] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # only a torn last line can fail; _repair_torn_tail removes it before appending
            latest[record["id"]] = record
    return latest


def verdict_of(answer: str | None, item: dict) -> dict:
    v = score(answer or "", item["gold"]["text"], item["distractor"]["text"])
    return {name: getattr(v, name) for name in VERDICT_FIELDS}


@dataclass
class RunSummary:
    system: str
    path: Path
    items: int
    skipped: int = 0
    asked: int = 0
    errors: int = 0
    labels: Counter = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0

    def metadata(self) -> dict:
        return {
            "items": self.items,
            "skipped_already_answered": self.skipped,
            "asked": self.asked,
            "errors": self.errors,
            **{f"label_{k}": v for k, v in sorted(self.labels.items())},
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "seconds": round(self.seconds, 3),
        }


def _timed_answer(system: System, item: dict) -> tuple[Answer, str, str, float]:
    started, t0 = utc_now(), time.monotonic()
    try:
        answer = system.answer(item)
    except Exception as exc:  # recorded on the item's line and counted as an error; the run goes on
        answer = Answer(text=None, error=f"{type(exc).__name__}: {exc}")
    return answer, started, utc_now(), time.monotonic() - t0


def result_line(system: System, item: dict, answer: Answer, started: str, finished: str, latency: float) -> dict:
    calls = [r.record() for r in answer.replies]
    final = answer.replies[-1] if answer.replies else None
    costs = [c["cost"] for c in calls if c["cost"] is not None]
    return {
        "id": item["id"],
        "lang": item["lang"],
        "system": system.key,
        "answer": answer.text,
        "error": answer.error,
        "verdict": verdict_of(answer.text, item),
        "model": final.model if final else None,
        "provider": final.provider if final else None,
        "prompt_tokens": sum(c["prompt_tokens"] or 0 for c in calls),
        "completion_tokens": sum(c["completion_tokens"] or 0 for c in calls),
        "cost": sum(costs) if costs else None,
        "latency_s": round(latency, 4),
        "calls": calls,
        "tool_calls": answer.tool_calls,
        "lookup": answer.lookup,
        "receipt": receipt(
            item,
            contexts=answer.contexts,
            prompt=answer.prompt,
            settings=system.settings(),
            started_at=started,
            finished_at=finished,
        ),
    }


def run_items(
    system: System,
    items: Iterable[dict],
    path: Path | str,
    *,
    workers: int = 1,
    retry_errors: bool = False,
    on_line: Callable[[dict], None] | None = None,
) -> RunSummary:
    """Answer every item not yet answered in `path`, appending one scored line per item."""
    path = Path(path)
    items = list(items)
    path.parent.mkdir(parents=True, exist_ok=True)
    _repair_torn_tail(path)
    done = {i for i, line in load_log(path).items() if not (retry_errors and line.get("error"))}
    pending = [item for item in items if item["id"] not in done]
    summary = RunSummary(system=system.key, path=path, items=len(items), skipped=len(items) - len(pending))
    t0 = time.monotonic()
    with open(path, "a", encoding="utf-8") as log, ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(_timed_answer, system, item): item for item in pending}
        for future in as_completed(futures):
            item = futures[future]
            line = result_line(system, item, *future.result())
            log.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
            log.flush()  # per line: a kill loses at most the lines still in flight
            summary.asked += 1
            summary.errors += line["error"] is not None
            summary.labels[line["verdict"]["label"]] += 1
            summary.prompt_tokens += line["prompt_tokens"]
            summary.completion_tokens += line["completion_tokens"]
            if line["cost"] is not None:
                summary.cost = (summary.cost or 0.0) + line["cost"]
            if on_line:
                on_line(line)
    summary.seconds = time.monotonic() - t0
    return summary


def scored_view(items: Iterable[dict], log: dict[str, dict], system_key: str) -> tuple[list[dict], list[str]]:
    """The deterministic per-item view of a run: (lines in item order, ids with no answer yet).

    Re-scores every answer with the installed scorer, so a scorer fix reaches old runs without
    re-asking a model; timestamps and latencies stay in the log, out of this view."""
    lines, missing = [], []
    for item in items:
        record = log.get(item["id"])
        if record is None:
            missing.append(item["id"])
            continue
        lines.append(
            {
                **{k: item.get(k) for k in ITEM_FIELDS},
                "system": system_key,
                "answer": record["answer"],
                "error": record["error"],
                "verdict": verdict_of(record["answer"], item),
                "model": record.get("model"),
                "provider": record.get("provider"),
                "cost": record.get("cost"),
                "tool_calls": record.get("tool_calls") or [],
                "lookup": record.get("lookup"),
            }
        )
    return lines, missing


def write_jsonl_atomic(path: Path | str, lines: Iterable[dict]) -> None:
    write_atomic(path, "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines).encode("utf-8"))


def prepare_system(
    key: str,
    items: list[dict],
    *,
    tools=None,
    endpoints: dict | None = None,
    confirm: bool = False,
    echo: Callable[[str], None] | None = None,
) -> System:
    """Everything that can fail before money is spent, in that order (R3, issue 5 "Bad input"):
    unknown key -> missing API key -> unreachable endpoint -> cost gate. Returns a ready system;
    the caller closes its client (`system.client.close()`) when it has one."""
    from .client import ChatClient, cost_gate, estimate_cost
    from .systems import build_system, parse_system_key

    parsed = parse_system_key(key)
    clients = {}
    if parsed.slug is not None:
        config = (endpoints or {}).get(parsed.slug)
        if config is not None:
            clients[parsed.slug] = ChatClient(config)
    system = build_system(key, tools=tools, clients=clients)
    client = clients.get(parsed.slug)
    if client is not None:
        try:
            client.check()
            estimates = [system.estimate_tokens(item) for item in items]
            estimate = estimate_cost(
                client.config, len(items), sum(e[0] for e in estimates), sum(e[1] for e in estimates)
            )
            cost_gate(client.config, estimate, confirm=confirm, echo=echo)
        except BaseException:
            client.close()
            raise
    return system
