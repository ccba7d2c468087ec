"""Runs: one system over a set of items, resumable, one scored line per item (R3, PROTOCOL §7).

The run log `data/results/{system}/{lang}.jsonl` is append-only; each line is written by the
worker that produced it, under a lock, flushed and fsynced before that worker starts its next
call, so a kill loses at most the calls in flight. A system that asks no model (the lookups:
oracle, recite, cite/*, search/pit) has its lines flushed one by one and fsynced once at the end
(issue 27.4): its log is deleted before every run and never resumed, and a lookup costs nothing to
redo, so a per-line fsync (57% of those systems' time at CH-PiT scale) protected nothing. On restart a torn last line is repaired or cut,
ids with an error-free line are done, errored ids are asked again (by default) and the newer line
is appended; the winner per id is its last error-free line, else its last errored one. A log whose
settings (endpoint, model, prompts, budgets) differ from this run's is refused unless `new_run`.

`scored_view` turns a log into the deterministic per-item view the report reads:
winner per id, in item order, re-scored with the installed scorer.

Repeats (issue 25): a model system may ask every item N times (`repeats`); each line carries its
`repeat` index (0 for a line written before repeats existed), winners and resume are per (id,
repeat), and repeat 0 alone is the run: the scored view, the run report and the published
report files read it only, so asking more repeats never changes them. `repeats_view` is the
scored view of every repeat, for the report's agreement section.
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from chpit_scorer import score

from ..files import write_atomic
from .errors import RunError, RunLogError
from .receipts import receipt, utc_now
from .systems import Answer, System, published_name

VERDICT_FIELDS = ("label", "gold_coverage", "distractor_coverage", "shared_coverage", "distractor_all_coverage")
# Item fields the report needs next to each verdict (R4), copied into the scored view.
ITEM_FIELDS = (
    "id",
    "lang",
    "act_id",
    "sr_number",
    "article_number",
    "e_id",
    "as_of",
    "kind",
    "gold_is_current",
    "recite_label",
    "change_date",  # with act_id and e_id: the change an item was made from (the report's clusters)
)
# The published mode extras (PROTOCOL §4, §5), carried into the scored view when a line has them.
VIEW_EXTRAS = (
    "context_empty",
    "tool_result",
    "n_tool_calls",
    "as_of_any",
    "as_of_passed",
    "sr_article_correct",
    "abstained",
)  # the last: cite or abstain (issue 16), for the report's abstention table


SCORED_SUFFIX = ".scored.jsonl"  # the scored view of repeat 0, the report's input
REPEATS_SUFFIX = ".repeats.jsonl"  # the scored view of every repeat, when a run has more than one


def repeat_of(line: dict) -> int:
    return int(line.get("repeat", 0))


def results_path(results_dir: Path | str, system_key: str, lang: str) -> Path:
    """`{results_dir}/{system}/{lang}.jsonl`; a key's `/` becomes a subfolder (ARCHITECTURE "Outputs")."""
    parts = system_key.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise RunError(f"system key {system_key!r} cannot be a results path")
    return Path(results_dir, *parts, f"{lang}.jsonl")


def scored_path(results_dir: Path | str, system_key: str, lang: str) -> Path:
    return results_path(results_dir, system_key, lang).with_suffix(SCORED_SUFFIX)


def repeats_path(results_dir: Path | str, system_key: str, lang: str) -> Path:
    return results_path(results_dir, system_key, lang).with_suffix(REPEATS_SUFFIX)


def read_jsonl(path: Path | str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def repair_torn_tail(path: Path) -> None:
    """PROTOCOL §7: a last line without its newline gets one if it parses, else it is cut (a run
    killed mid-write; that item was not answered)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        data = fh.read()
        if data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            json.loads(data[start:])
        except ValueError:
            fh.truncate(start)
        else:
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())


def read_log(path: Path | str) -> list[dict]:
    """Every line of a run log in file order. Blank lines are skipped; an unparseable LAST line is
    dropped with a warning (a torn write); an unparseable interior line is a RunLogError naming
    the file and line, never skipped: the log is damaged and answers could be lost (PROTOCOL §7)."""
    path = Path(path)
    if not path.exists():
        return []
    rows = [(n, raw) for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if raw.strip()]
    lines = []
    for i, (n, raw) in enumerate(rows):
        try:
            record = json.loads(raw)
            if not isinstance(record, dict) or "id" not in record:
                raise ValueError("not a result object with an id")
        except ValueError as exc:
            if i == len(rows) - 1:
                warnings.warn(f"{path}:{n}: dropping an unparseable last line ({exc})", stacklevel=2)
                break
            raise RunLogError(f"{path}:{n}: unparseable line in the run log ({exc}); repair or move the file") from None
        lines.append(record)
    return lines


def errored(line: Mapping) -> bool:
    """PROTOCOL §7: a line carries `error` only when its item errored, and a reader of the published
    format counts the key as an error. Our logs from before that wrote `"error": null`: no error."""
    return line.get("error") is not None


def winners(lines: Iterable[dict], repeat: int = 0) -> dict[str, dict]:
    """PROTOCOL §7: per id its last error-free line, else its last errored line (of one repeat)."""
    best: dict[str, dict] = {}
    for line in lines:
        if repeat_of(line) != repeat:
            continue
        held = best.get(line["id"])
        if held is None or not errored(line) or errored(held):
            best[line["id"]] = line
    return best


def load_log(path: Path | str) -> dict[str, dict]:
    """The winning line per item id of a run log (repeat 0)."""
    return winners(read_log(path))


def load_repeats(path: Path | str) -> dict[int, dict[str, dict]]:
    """{repeat: winning line per item id} of a run log, every repeat it holds."""
    lines = read_log(path)
    return {r: winners(lines, r) for r in sorted({repeat_of(line) for line in lines})}


def verdict_of(answer: str | None, item: dict) -> dict:
    v = score(answer or "", item["gold"]["text"], item["distractor"]["text"])
    return {name: getattr(v, name) for name in VERDICT_FIELDS}


@dataclass
class RunSummary:
    system: str
    path: Path
    items: int
    skipped: int = 0  # already answered before this run
    asked: int = 0
    errors: int = 0  # lines written with an error by this run
    labels: Counter = field(default_factory=Counter)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def metadata(self) -> dict:
        return {
            "items": self.items,
            "skipped_already_answered": self.skipped,
            "asked": self.asked,
            "errors": self.errors,
            **{f"label_{k}": v for k, v in sorted(self.labels.items())},
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "seconds": round(self.seconds, 3),
        }


def published_system(system: System) -> str:
    """The published runs' `system` (PROTOCOL §7): `{model_short}/{mode}`, `recite/recite`; ours
    stays in `system_key` and names the folder (ARCHITECTURE "Outputs")."""
    if system.config is None:
        return published_name(system.key)
    return f"{system.config.model_short}/{system.mode}"


def _timed_answer(system: System, item: dict) -> tuple[Answer, str, str, float]:
    """The answer, its start and end (UTC) and its latency: the seconds it took, less the back-off
    slept between retries (PROTOCOL §7), so a rate-limited endpoint does not look slow."""
    started, t0, backoff = utc_now(), time.monotonic(), system.backoff_s()
    try:
        answer = system.answer(item)
    except Exception as exc:  # PROTOCOL §4: answer "", scored, the error recorded; the run goes on
        answer = Answer(text="", error=f"{type(exc).__name__}: {exc}")
    return answer, started, utc_now(), time.monotonic() - t0 - (system.backoff_s() - backoff)


def price_per_mtok(system: System) -> dict | None:
    """`{in, out}` USD per 1M tokens of a model system (PROTOCOL §7 price table), None when unpriced."""
    config = system.config
    if config is None or not config.priced:
        return None
    return {"in": config.price_input_per_mtok, "out": config.price_output_per_mtok}


def line_cost(system: System, input_tokens: int, output_tokens: int, reported: float | None) -> float:
    """PROTOCOL §7: the endpoint's reported cost, else (none or 0 reported) tokens x price."""
    if reported:
        return reported
    return system.config.usd(input_tokens, output_tokens) if system.config is not None else 0.0


def result_line(
    system: System,
    item: dict,
    answer: Answer,
    started: str,
    finished: str,
    latency: float,
    workers: int = 1,
    repeat: int = 0,
) -> dict:
    """One line, published keys first in published order (PROTOCOL §7), then ours."""
    calls = [r.record() for r in answer.replies]
    final = answer.replies[-1] if answer.replies else None
    reported = [c["cost"] for c in calls if c["cost"] is not None]
    input_tokens = sum(c["prompt_tokens"] or 0 for c in calls)
    output_tokens = sum(c["completion_tokens"] or 0 for c in calls)
    cost_reported = sum(reported) if reported else None
    settings = system.settings()
    return {
        "id": item["id"],
        "system": published_system(system),
        "model": system.config.model if system.config is not None else None,
        "mode": system.mode,
        "lang": item["lang"],
        "answer": answer.text or "",
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": line_cost(system, input_tokens, output_tokens, cost_reported),
        "served_model": final.model if final else None,
        "provider": final.provider if final else None,
        "latency_s": round(latency, 4),
        "retries": sum(r.retries for r in answer.replies),
        "calls": sum(r.requests for r in answer.replies),
        "max_tokens_used": max((r.max_tokens for r in answer.replies), default=None),
        "verdict": verdict_of(answer.text, item),
        **({"tool_calls": answer.tool_calls} if system.parsed.tool_calls else {}),
        **answer.extras,
        **({"error": answer.error} if answer.error is not None else {}),  # only when errored (§7)
        "system_key": system.key,
        "repeat": repeat,
        "cost_reported_usd": cost_reported,
        "call_log": calls,
        "lookup": answer.lookup,
        "receipt": {
            **receipt(
                item,
                contexts=answer.contexts,
                prompt=answer.prompt,
                settings=settings,
                started_at=started,
                finished_at=finished,
            ),
            "workers": workers,
            "price_per_mtok": price_per_mtok(system),
            # The model's training cutoff (issue 25): read by the report's cutoff split, not a setting
            # (a run resumed with a corrected cutoff asks nothing again).
            "cutoff": system.config.cutoff if system.config is not None else None,
        },
    }


def check_resumable(path: Path, lines: list[dict], settings: dict, *, new_run: bool) -> None:
    """Issue 14 item 4: answers from another endpoint, model or setting must not be mixed into this
    run. With `new_run` the old log is moved aside (`{lang}.jsonl.superseded-N`), never deleted."""
    old = next((line["receipt"]["settings"] for line in reversed(lines) if "receipt" in line), None)
    if old is None or old == settings:
        return
    if not new_run:
        differ = sorted(k for k in old.keys() | settings.keys() if old.get(k) != settings.get(k))
        raise RunLogError(
            f"{path}: its answers were made with other settings ({', '.join(differ)} differ: "
            + "; ".join(f"{k} was {old.get(k)!r}, now {settings.get(k)!r}" for k in differ[:3])
            + "); pass --new-run (run config new_run: true) to start over, or use another results folder"
        )
    n = 1
    while path.with_name(f"{path.name}.superseded-{n}").exists():
        n += 1
    path.rename(path.with_name(f"{path.name}.superseded-{n}"))


def run_items(
    system: System,
    items: Iterable[dict],
    path: Path | str,
    *,
    workers: int = 1,
    retry_errors: bool = True,
    new_run: bool = False,
    on_line: Callable[[dict], None] | None = None,
    repeats: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Answer every item not yet answered in `path`, appending one scored line per item; with
    `repeats` > 1 every item is asked that many times, repeat 0 of every item first. `progress`
    hears (lines written, lines to write) before the first call and after each line (issue 23.8).

    Ctrl-C (or any exception in the caller's thread) stops the run: no new call starts, lines of
    the calls in flight are still written, and the exception propagates (PROTOCOL §7)."""
    path = Path(path)
    items = list(items)
    path.parent.mkdir(parents=True, exist_ok=True)
    repair_torn_tail(path)
    lines = read_log(path)
    check_resumable(path, lines, system.settings(), new_run=new_run)
    if not path.exists():
        lines = []
    done = {
        (i, r) for r in range(repeats) for i, line in winners(lines, r).items() if not (retry_errors and errored(line))
    }
    pending = [(item, r) for r in range(repeats) for item in items if (item["id"], r) not in done]
    summary = RunSummary(
        system=system.key, path=path, items=len(items) * repeats, skipped=len(items) * repeats - len(pending)
    )
    stop, lock = threading.Event(), threading.Lock()  # stop: no new call starts
    durable_each_line = system.config is not None  # a paid call is never lost (module docstring)
    t0 = time.monotonic()

    def work(log, item: dict, repeat: int) -> None:
        try:
            line = result_line(system, item, *_timed_answer(system, item), workers=workers, repeat=repeat)
            if system.config is not None:  # an endpoint may echo a credential anywhere in its reply
                line = system.config.redact_line(line)
            with lock:
                log.write(json.dumps(line, ensure_ascii=False) + "\n")
                log.flush()
                if durable_each_line:
                    os.fsync(log.fileno())  # durable before this worker asks its next item
                summary.asked += 1
                summary.errors += errored(line)
                summary.labels[line["verdict"]["label"]] += 1
                summary.input_tokens += line["input_tokens"]
                summary.output_tokens += line["output_tokens"]
                summary.cost_usd += line["cost_usd"]
                if on_line:
                    on_line(line)
                if progress:
                    progress(summary.asked, len(pending))
        except BaseException:
            stop.set()  # the log cannot be written: start nothing more
            raise
        finally:
            slots.release()

    # Items are handed out one free worker at a time, so an interrupt (which Python raises in this
    # thread, while it waits for a slot) leaves nothing queued that could still start.
    slots = threading.Semaphore(max(1, workers))
    if progress:
        progress(0, len(pending))
    with open(path, "a", encoding="utf-8") as log, ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = []
        try:
            for item, repeat in pending:
                slots.acquire()
                if stop.is_set():
                    break
                futures.append(pool.submit(work, log, item, repeat))
            wait(futures)
        except BaseException:
            stop.set()
            raise
        for future in futures:
            future.result()  # a failure to write the log is the run's failure
        log.flush()
        os.fsync(log.fileno())
    summary.seconds = time.monotonic() - t0
    return summary


def log_status(items: Iterable[dict], path: Path | str, repeats: int = 1) -> dict:
    """What a run log says about `items` (issue 14 item 4): answered, errored, not yet asked, and the
    commonest error text among the winning lines; with repeats, counted per (item, repeat)."""
    ids = [item["id"] for item in items]
    by_repeat = load_repeats(path)
    logs = [by_repeat.get(r, {}) for r in range(repeats)]
    errors = Counter(log[i]["error"] for log in logs for i in ids if i in log and errored(log[i]))
    return {
        "items": len(ids) * repeats,
        "answered": sum(1 for log in logs for i in ids if i in log and not errored(log[i])),
        "errored": sum(errors.values()),
        "not_asked": sum(1 for log in logs for i in ids if i not in log),
        "commonest_error": errors.most_common(1)[0][0] if errors else None,
    }


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
                # The report's article-length breakdown (card: a long single paragraph is verbatim-only).
                "gold_chars": len(item["gold"]["text"]),
                "gold_paragraphs": sum(1 for p in item["gold"]["text"].splitlines() if p.strip()),
                "cutoff": (record.get("receipt") or {}).get("cutoff"),
                "system": system_key,
                "answer": record["answer"],
                **({"error": record["error"]} if errored(record) else {}),  # the line's shape (§7)
                "verdict": verdict_of(record["answer"], item),
                "model": record.get("model"),
                "served_model": record.get("served_model"),
                "provider": record.get("provider"),
                "cost": record.get("cost_usd"),
                "tool_calls": record.get("tool_calls") or [],
                "lookup": record.get("lookup"),
                **{k: record[k] for k in VIEW_EXTRAS if k in record},
            }
        )
    return lines, missing


def repeats_view(items: list[dict], path: Path | str, system_key: str) -> list[dict]:
    """The scored view of every repeat of a log, each line with its `repeat`; [] when the log has
    only repeat 0 (nothing to agree or disagree with)."""
    by_repeat = load_repeats(path)
    if len(by_repeat) < 2:
        return []
    return [{**line, "repeat": r} for r, log in by_repeat.items() for line in scored_view(items, log, system_key)[0]]


def write_jsonl_atomic(path: Path | str, lines: Iterable[dict]) -> None:
    write_atomic(
        path, "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines).encode("utf-8")
    )


def estimate_run(system: System, items: list[dict]) -> dict:
    """PROTOCOL §7 estimate of one model over `items` (`{items, input_tokens, output_tokens, usd}`);
    raises UnpricedModelError for an unpriced paid endpoint."""
    from .client import estimate_cost

    estimates = [system.estimate_tokens(item) for item in items]
    if system.config is None:
        return {"items": len(items), "input_tokens": 0, "output_tokens": 0, "usd": 0.0}
    return estimate_cost(system.config, len(items), sum(e[0] for e in estimates), sum(e[1] for e in estimates))


def prepare_system(
    key: str,
    items: list[dict],
    *,
    tools=None,
    endpoints: dict | None = None,
    confirm: bool = False,
    echo: Callable[[str], None] | None = None,
    repeats: int = 1,
) -> System:
    """Everything that can fail before money is spent, in that order (R3, PROTOCOL §7, issue 14):
    unknown key -> missing API key -> no price for a paid endpoint -> unreachable endpoint -> an
    agentic run on a local endpoint that makes no tool calls -> cost gate. Returns a ready system;
    the caller closes its client (`system.client.close()`) when it has one."""
    from .client import ChatClient, cost_gate
    from .errors import ToolCallsUnsupportedError
    from .systems import build_system, parse_system_key

    parsed = parse_system_key(key)
    clients = {}
    if parsed.slug is not None:
        config = (endpoints or {}).get(parsed.slug)
        if config is not None:
            clients[parsed.slug] = ChatClient(config)
    system = build_system(key, tools=tools, clients=clients)
    client = clients.get(parsed.slug) if parsed.slug is not None else None
    if client is not None:
        try:
            estimate = estimate_run(system, items * repeats)  # every repeat is paid for
            client.check()
            # Probed on loopback only, where a request is free; a paid router's models are known to call tools.
            if parsed.tool_calls and client.config.is_local and not client.supports_tool_calls():
                raise ToolCallsUnsupportedError(
                    f"{key}: the endpoint {client.config.public_url} (model {client.config.model}) returned no tool "
                    f"call for a trivial tool, so an agentic run would measure nothing; serve the model with a "
                    f"tool-aware chat template (llama.cpp --jinja) or choose another model"
                )
            cost_gate(client.config, estimate, confirm=confirm, echo=echo)
        except BaseException:
            client.close()
            raise
    return system
