"""The CH-PiT Inspect task: our core items as the dataset, our systems as the solver (model modes ask
Inspect's model through `bridge.InspectChatClient`), our scorer (S1-S8) as the Inspect scorer.

Every sample keeps the result line our runner would have written (`metadata["chpit_line"]`), so an
Inspect log imports back into data/results/ unchanged (chpit_assets.inspect.logs).
"""

from __future__ import annotations

import re
import threading
from datetime import date
from typing import Any, cast

import anyio.to_thread
from inspect_ai import Task
from inspect_ai._util.registry import registry_info
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, ModelOutput, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from chpit_assets.bench.items import core_path
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.runner import VERDICT_FIELDS, _timed_answer, read_jsonl, result_line, verdict_of
from chpit_assets.runs.sample import select_items
from chpit_assets.runs.systems import Answer, build_system, mode_entry

from .bridge import InspectChatClient, to_inspect

CORRECT, WRONG, UNGROUNDED = "grounded_correct", "grounded_wrong_version", "ungrounded"
LINE_KEY = "chpit_line"  # sample metadata: the result line, as data/results/{system}/{lang}.jsonl holds it
COVERAGES = VERDICT_FIELDS[1:]


def task_name(mode: str) -> str:
    """A mode as an Inspect task name (`agentic+search+verify` -> `agentic_search_verify`)."""
    return re.sub(r"[^a-z0-9]+", "_", mode)


def model_slug(model_name: str) -> str:
    """A slug for our system key from an Inspect model name (`openai-api/loop/Qwen3-8B` -> `qwen3-8b`)."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", model_name.rsplit("/", 1)[-1].lower()).strip("-._")
    return slug or "model"


def is_date_sensitive(item: dict, tools: PitTools) -> bool | None:
    """Card: an item is date-sensitive when reciting today's edition does not answer it. The published
    items carry `recite_label`; a core item is asked the recite way here (a lookup, free). None: the
    lookup failed, so the item is in no date-sensitive count."""
    label = item.get("recite_label")
    if label is None:
        try:
            label = verdict_of(build_system("recite", tools=tools).answer(item).text, item)["label"]
        except Exception:  # a recite miss says nothing about the date; the item stays uncounted
            return None
    return label != CORRECT


def core_samples(langs: list[str], build_dir, tools: PitTools, *, sample_per_lang: int = 0, limit: int = 0):
    """One Sample per core item (B16), per language in order; the §6 subsample and limit as our runs take them."""
    samples = []
    for lang in langs:
        path = core_path(build_dir, lang)
        if not path.exists():
            raise FileNotFoundError(f"no core items for {lang}: {path} is missing (build first: make run)")
        for item in select_items(read_jsonl(path), sample_per_lang=sample_per_lang, limit=limit):
            samples.append(sample_of(item, is_date_sensitive(item, tools)))
    return samples


def sample_of(item: dict, date_sensitive: bool | None) -> Sample:
    return Sample(
        id=item["id"],
        input=item["question"],
        target=item["gold"]["text"],
        metadata={"item": item, "date_sensitive": date_sensitive},
    )


def transcript(item: dict, answer_text: str, prompt: list[dict] | None, replies: list[dict], tool_results: list[str]):
    """The conversation a system had, as Inspect messages: the first request, then each assistant
    message with the tool results that answered its calls (in call order), then the final answer.
    A lookup without a model is the question and its answer."""
    messages = list(prompt or [{"role": "user", "content": item["question"]}])
    results = iter(tool_results)
    for reply in replies:
        messages.append(reply)
        for call in reply.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": next(results, "")})
    if not replies or messages[-1].get("content") != answer_text:
        messages.append({"role": "assistant", "content": answer_text})
    return to_inspect(messages)


def _answer_transcript(item: dict, answer: Answer, final_text: str):
    tool_results = answer.contexts if answer.tool_calls else []
    return transcript(item, final_text, answer.prompt, [r.message for r in answer.replies], tool_results)


class SerializedTools:
    """The point-in-time tools, one call at a time: Inspect runs samples concurrently, and a search
    index's SQLite handle is shared by every thread that asks it (a crash, not an error, otherwise)."""

    def __init__(self, tools: PitTools):
        self._tools, self._lock = tools, threading.Lock()

    def __getattr__(self, name: str):
        attribute = getattr(self._tools, name)
        if not callable(attribute):
            return attribute

        def locked(*args, **kwargs):
            with self._lock:
                return attribute(*args, **kwargs)

        return locked


@solver
def chpit_solver(mode: str, tools: PitTools, slug: str = "") -> Solver:
    """Answer each item with the registry's system for `mode`, exactly as our runner would."""
    entry = mode_entry(mode)
    serialized = SerializedTools(tools)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        item = state.metadata["item"]
        clients = {}
        key = mode
        if entry.model:
            client = InspectChatClient(get_model())
            name = slug or model_slug(client.config.model)
            key, clients = f"{name}/{mode}", {name: client}
        system = build_system(key, tools=serialized, clients=clients)
        answer, started, finished, latency = await anyio.to_thread.run_sync(_timed_answer, system, item)
        line = result_line(system, item, answer, started, finished, latency)
        state.metadata[LINE_KEY] = line
        state.messages = _answer_transcript(item, answer, line["answer"])
        state.output = ModelOutput.from_content(model=line["model"] or key, content=line["answer"])
        state.completed = True
        return state

    return solve


def _mean(key: str, scores: list[SampleScore]) -> float:
    """Mean of one key of chpit_scorer's dict values: a label's share, or a mean coverage."""
    values = [float(cast(dict, s.score.value)[key]) for s in scores]
    return sum(values) / len(values) if values else 0.0


def _mean_of(key: str) -> Metric:
    # Typed: Inspect hands a metric SampleScores (with the sample's metadata) only when it says so.
    def compute(scores: list[SampleScore]) -> float:
        return _mean(key, scores)

    return compute


@metric
def correct() -> Metric:
    """Share grounded_correct (the card's `correct %`, as a fraction)."""
    return _mean_of(CORRECT)


@metric
def wrong_version() -> Metric:
    """Share grounded in the adjacent edition (the distractor)."""
    return _mean_of(WRONG)


@metric
def ungrounded() -> Metric:
    return _mean_of(UNGROUNDED)


@metric
def date_sensitive_correct() -> Metric:
    """Share correct over the date-sensitive items (recite is not correct there): the point-in-time number."""

    def compute(scores: list[SampleScore]) -> float:
        hard = [s for s in scores if (s.sample_metadata or {}).get("date_sensitive")]
        return _mean(CORRECT, hard)

    return compute


@metric
def date_sensitive_share() -> Metric:
    """Share of the items that are date-sensitive."""

    def compute(scores: list[SampleScore]) -> float:
        return (
            sum(bool((s.sample_metadata or {}).get("date_sensitive")) for s in scores) / len(scores) if scores else 0.0
        )

    return compute


@metric
def mean_gold_coverage() -> Metric:
    return _mean_of("gold_coverage")


@metric
def mean_distractor_coverage() -> Metric:
    return _mean_of("distractor_coverage")


@metric
def mean_shared_coverage() -> Metric:
    return _mean_of("shared_coverage")


@metric
def mean_distractor_all_coverage() -> Metric:
    return _mean_of("distractor_all_coverage")


METRICS = [
    correct(),
    wrong_version(),
    ungrounded(),
    date_sensitive_correct(),
    date_sensitive_share(),
    mean_gold_coverage(),
    mean_distractor_coverage(),
    mean_shared_coverage(),
    mean_distractor_all_coverage(),
]


LABELS = (CORRECT, WRONG, UNGROUNDED)


def verdict_score(answer: str, item: dict) -> Score:
    """Our verdict (S1-S8) as an Inspect Score: `value` holds 1/0 per label (Inspect reduces values
    as numbers) and the four coverages; the label itself is the explanation and in `metadata`."""
    return verdict_as_score(verdict_of(answer, item), answer)


def verdict_as_score(verdict: dict, answer: str) -> Score:
    value = {**{label: float(verdict["label"] == label) for label in LABELS}, **{c: verdict[c] for c in COVERAGES}}
    return Score(value=value, answer=answer, explanation=verdict["label"], metadata={"verdict": verdict})


def metric_values(scores: list[SampleScore]) -> dict[str, float]:
    """Every METRICS value over `scores`, by metric name (what an eval's results show)."""
    return {registry_info(metric).name.rsplit("/", 1)[-1]: float(cast(Any, metric)(scores)) for metric in METRICS}


def verdict_of_score(score: Score) -> dict:
    """The verdict a `verdict_score` carries."""
    return (score.metadata or {})["verdict"]


@scorer(metrics=METRICS)
def chpit_scorer():
    """chpit_scorer.score over the final answer against the item's gold and distractor."""

    async def score(state: TaskState, target: Target) -> Score:
        return verdict_score(state.output.completion, state.metadata["item"])

    return score


def chpit_task(
    mode: str,
    lang: str | list[str] = "de",
    data_dir: str = "",
    today: str = "",
    slug: str = "",
    sample_per_lang: int = 0,
    limit: int = 0,
) -> Task:
    """One mode of the registry over the core split of `lang` (comma-separated for several)."""
    from chpit_assets.layout import Layout

    mode_entry(mode)  # an unknown mode fails here, before any sample
    layout = Layout.resolve(data_dir)
    tools = PitTools(
        # `-T today=2026-09-04` arrives parsed as a date (Inspect reads -T values as YAML)
        layout.released_store(),
        today=date.fromisoformat(str(today)) if today else None,
        search_dir=layout.search_dir,
    )
    # `-T lang=de,fr` arrives as a list
    langs = [part.strip() for part in (lang if isinstance(lang, list) else str(lang).split(",")) if part.strip()]
    samples = core_samples(langs, layout.build_dir, tools, sample_per_lang=sample_per_lang, limit=limit)
    return Task(
        dataset=MemoryDataset(samples, name=f"chpit-core-{'-'.join(langs)}"),
        solver=chpit_solver(mode, tools, slug),
        scorer=chpit_scorer(),
        config=GenerateConfig(temperature=0.0),  # R3
        name=task_name(mode),
        metadata={"chpit_mode": mode, "langs": langs},
    )
