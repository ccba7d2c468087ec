"""chpit run logs <-> Inspect `.eval` logs (issue 26).

`export_run`: one run log, `data/results/{system}/{lang}.jsonl`, becomes an Inspect log that
`inspect view` opens: per line a sample with the question, the conversation (tool calls with their
arguments and outcome), the answer, our verdict as its score (label and the four coverages), and the
line itself in the sample's metadata. A re-asked item's later lines are later epochs of its sample.

`import_log`: an Inspect log of a CH-PiT task (ours, or an export) becomes run logs again, every
line exactly as the sample carries it, in the order the run wrote them: an export imported back is
identical byte for byte, and a log from `inspect eval chpit_assets/inspect_tasks.py` lands in
data/results/ for our report.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    read_eval_log,
    write_eval_log,
)
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import SampleScore

from chpit_assets.files import write_atomic
from chpit_assets.runs.runner import (
    load_log,
    read_jsonl,
    read_log,
    results_path,
    scored_path,
    scored_view,
    winners,
    write_jsonl_atomic,
)
from chpit_assets.runs.systems import parse_system_key

from .task import LINE_KEY, metric_values, task_name, transcript, verdict_as_score

LINE_NO = "chpit_line_no"  # sample metadata: the line's place in its run log, 1-based
SCORER = "chpit_scorer"


class InspectLogError(ValueError):
    """A run log or an Inspect log that cannot cross: names the file and the line or sample."""


def _messages(item: dict, line: dict):
    """The conversation as the line records it: each tool call with its arguments and outcome (the
    results themselves are hashed in the receipt, not kept), then the answer."""
    replies, results = [], []
    for n, call in enumerate(line.get("tool_calls") or [], 1):
        arguments = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        call_id = f"call_{n}"
        replies.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": call["name"], "arguments": arguments}}
                ],
            }
        )
        results.append(json.dumps({"ok": call["ok"], **({"error": call["error"]} if "error" in call else {})}))
    return transcript(item, line["answer"], None, replies, results)


def date_sensitive_by_id(items: list[dict], recite_log: Path | None) -> dict[str, bool]:
    """item id -> date-sensitive (reciting today's edition does not answer it), as our report decides
    it: the items' `recite_label`, else the recite run's winning verdicts; an id in neither is unknown."""
    from chpit_assets.report.tables import recite_easy_by_id

    recite = list(load_log(recite_log).values()) if recite_log is not None and recite_log.exists() else []
    easy = recite_easy_by_id(
        {"items": [{"id": i["id"], "recite_label": i.get("recite_label")} for i in items], "recite": recite}
    )
    return {item_id: not is_easy for item_id, is_easy in easy.items()}


def export_run(run_log: Path | str, build_dir: Path | str, out: Path | str, recite_log: Path | None = None) -> Path:
    """Write `out` (an Inspect `.eval` log) from one run log and the core items it answered;
    `recite_log` (the language's recite run) tells which items are date-sensitive."""
    run_log, out = Path(run_log), Path(out)
    lines = read_log(run_log)
    if not lines:
        raise InspectLogError(f"{run_log}: no result lines to export")
    lang, system_key = lines[0]["lang"], lines[0]["system_key"]
    parsed = parse_system_key(system_key)
    from chpit_assets.bench.items import core_path

    items = {item["id"]: item for item in read_jsonl(core_path(build_dir, lang))}
    sensitive = date_sensitive_by_id(list(items.values()), recite_log)
    samples: list[EvalSample] = []
    winning: list[EvalSample] = []  # per item its winning line's sample (PROTOCOL §7), as our report counts
    won = {id(line) for line in winners(lines).values()}
    seen: dict[str, int] = defaultdict(int)
    for n, line in enumerate(lines, 1):
        if (line["lang"], line["system_key"]) != (lang, system_key):
            raise InspectLogError(
                f"{run_log}:{n}: a {line['system_key']} [{line['lang']}] line in a {system_key} [{lang}] log"
            )
        item = items.get(line["id"])
        if item is None:
            raise InspectLogError(f"{run_log}:{n}: item {line['id']} is not in {core_path(build_dir, lang)}")
        seen[line["id"]] += 1
        sample = EvalSample(
            id=line["id"],
            epoch=seen[line["id"]],  # a re-asked item: its later lines are later epochs
            input=item["question"],
            target=item["gold"]["text"],
            messages=_messages(item, line),
            output=ModelOutput.from_content(model=line["model"] or system_key, content=line["answer"]),
            scores={SCORER: verdict_as_score(line["verdict"], line["answer"])},
            metadata={"item": item, "date_sensitive": sensitive.get(line["id"]), LINE_KEY: line, LINE_NO: n},
            total_time=line["latency_s"],
            working_time=line["latency_s"],
        )
        samples.append(sample)
        if id(line) in won:
            winning.append(sample)
    receipts = [line["receipt"] for line in lines if "receipt" in line]
    created = min((r["started_at"] for r in receipts), default=None)
    log = EvalLog(
        eval=EvalSpec(
            created=created or datetime.now(UTC).isoformat(),
            task=task_name(parsed.mode),
            dataset=EvalDataset(name=f"chpit-core-{lang}", samples=len(items), sample_ids=sorted(items)),
            model=lines[-1]["model"] or f"none/{system_key}",
            config=EvalConfig(epochs=max(seen.values())),
            metadata={"chpit_mode": parsed.mode, "langs": [lang], "system_key": system_key, "source": str(run_log)},
        ),
        status="success",
        stats=EvalStats(
            started_at=created or "", completed_at=max((r["finished_at"] for r in receipts), default=created or "")
        ),
        results=EvalResults(
            total_samples=len(samples),
            completed_samples=len(samples),
            scores=[_results([_sample_score(s) for s in winning])],
        ),
        samples=samples,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(out), format="eval")
    return out


def _sample_score(sample: EvalSample) -> SampleScore:
    return SampleScore(score=(sample.scores or {})[SCORER], sample_id=sample.id, sample_metadata=sample.metadata)


def _results(scores: list[SampleScore]) -> EvalScore:
    metrics = {name: EvalMetric(name=name, value=value) for name, value in metric_values(scores).items()}
    return EvalScore(name=SCORER, scorer=SCORER, metrics=metrics)


def import_log(
    eval_log: Path | str, results_dir: Path | str, build_dir: Path | str | None = None, *, replace: bool = False
) -> list[Path]:
    """Write the run logs an Inspect log of a CH-PiT task holds; returns their paths.

    A run log that already exists with other content is refused unless `replace` (the same content
    is left as it is: importing twice changes nothing). With `build_dir`, each log's scored view
    (`{lang}.scored.jsonl`, what the report reads) is written too, over that build's core items."""
    eval_log = Path(eval_log)
    log = read_eval_log(str(eval_log))
    by_log: dict[Path, list[tuple[int, int, dict]]] = defaultdict(list)
    for n, sample in enumerate(log.samples or []):
        line = (sample.metadata or {}).get(LINE_KEY)
        if not isinstance(line, dict):
            raise InspectLogError(
                f"{eval_log}: sample {sample.id} (epoch {sample.epoch}) has no {LINE_KEY}: not a CH-PiT task's log"
            )
        path = results_path(results_dir, line["system_key"], line["lang"])
        by_log[path].append(((sample.metadata or {}).get(LINE_NO, n + 1), n, line))
    written = []
    for path, rows in sorted(by_log.items()):
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for _, _, line in sorted(rows, key=lambda r: r[:2]))
        if path.exists() and path.read_text(encoding="utf-8") != data and not replace:
            raise InspectLogError(f"{path} exists with other lines; pass --replace to overwrite it with {eval_log}'s")
        if not path.exists() or path.read_text(encoding="utf-8") != data:
            write_atomic(path, data.encode("utf-8"))
        written.append(path)
    if build_dir is not None:
        for _, rows in sorted(by_log.items()):
            _write_scored(results_dir, build_dir, rows[0][2]["system_key"], rows[0][2]["lang"])
    return written


def _write_scored(results_dir: Path | str, build_dir: Path | str, system_key: str, lang: str) -> None:
    """The scored view of an imported log, as the `scored_results` asset writes it (R4)."""
    from chpit_assets.bench.items import core_path

    core = core_path(build_dir, lang)
    if not core.exists():
        raise InspectLogError(f"{system_key} [{lang}]: no core items at {core} to score the imported lines against")
    lines, _ = scored_view(read_jsonl(core), load_log(results_path(results_dir, system_key, lang)), system_key)
    write_jsonl_atomic(scored_path(results_dir, system_key, lang), lines)
