"""Run systems on a release's core (issue 24 item 2): a plain function, `run_release`, that the
CLI and the Dagster asset both call.

- The items are the release's 1,500 core items (raw/core-{lang}.jsonl), validated first: a bad
  release is refused before anything is asked, so nothing of it reaches results.
- `oracle` answers with the published gold (R1 on the published items: must be 1.000).
- `recite`, `<slug>/current`, `<slug>/pit` (and `pit+verify`) take their article from the
  release's `mcp-cache.jsonl` -- the exact tool result every published model saw -- when it holds
  that call (the line says `context_source: published_cache`), else from our tools over our own
  corpus (`context_source: chpit`). With no corpus built, a call the cache lacks is an error on
  that item's line, naming the call.
- `<slug>/closed` needs only the item text; `<slug>/agentic*` uses our tools over our corpus
  (built live: `run --source live`), refused up front when there is none.
- Resume, the cost gate and receipts are the ones of our own runs (runs.runner); the logs go to
  the release's own results folder, apart from our build's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chpit_assets.bench.items import SEED
from chpit_assets.runs.run_report import write_run_report
from chpit_assets.runs.runner import RunSummary, prepare_system, results_path, run_items
from chpit_assets.runs.sample import select_items
from chpit_assets.runs.systems import Answer, ContextSystem, System, parse_system_key

from .errors import ReleaseError
from .layout import MCP_CACHE, Release, open_release
from .validate import core_items, validate_release

PUBLISHED_CACHE, CHPIT = "published_cache", "chpit"


def cache_key(name: str, arguments: Mapping) -> str:
    """The published cache's key: `json.dumps([tool_name, arguments], sort_keys=True)`, non-ASCII kept."""
    return json.dumps([name, dict(arguments)], sort_keys=True, ensure_ascii=False)


class PublishedContexts:
    """The release's MCP cache in front of our tools; remembers, per worker thread, where the last
    call's result came from."""

    def __init__(self, release: Release, tools=None):
        self.tools = tools
        self.entries: dict[str, dict] = {}
        folder = release.published_results()
        path = folder / MCP_CACHE if folder is not None else None
        if path is not None and path.exists():
            rel = path.relative_to(release.files).as_posix()
            for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if raw.strip():
                    try:
                        row = json.loads(raw)
                        # Re-keyed canonically, so an ASCII-escaped key finds the same call.
                        name, arguments = json.loads(row["key"])
                        self.entries[cache_key(name, arguments)] = row["result"]
                    except (ValueError, KeyError, TypeError):
                        raise ReleaseError(rel, f"line {n} is not a {{key, result}} cache entry") from None
        self._local = threading.local()

    def call_tool(self, _tools, name: str, arguments: Mapping) -> dict:
        """`call_tool`'s signature, so a system calls it where it would call ours."""
        hit = self.entries.get(cache_key(name, arguments))
        if hit is not None:
            self._local.source = PUBLISHED_CACHE
            return hit
        self._local.source = CHPIT
        if self.tools is None:
            raise ReleaseError(
                MCP_CACHE,
                f"no published result for {name}({json.dumps(dict(arguments), ensure_ascii=False)}) and no chpit corpus to ask",
            )
        from chpit_assets.pit import call_tool

        return call_tool(self.tools, name, dict(arguments))

    def take_source(self) -> str | None:
        source, self._local.source = getattr(self._local, "source", None), None
        return source


class ReleaseOracle(System):
    """R1 on the published items: the published gold is the oracle's answer."""

    key = mode = "oracle"

    def answer(self, item: dict) -> Answer:
        text = item["gold"]["text"]
        return Answer(
            text=text, contexts=[text], lookup={"source": "published_gold", "version_id": item["gold"]["version_id"]}
        )


class ReleaseRecite(System):
    """R1 recite, as published: `ch_get_act_article` without a date, its article text or ""."""

    key = mode = "recite"

    def __init__(self, contexts: PublishedContexts):
        self.contexts = contexts

    def answer(self, item: dict) -> Answer:
        arguments = {"sr_number": item["sr_number"], "article": item["article_number"], "lang": item["lang"]}
        result = self.contexts.call_tool(None, "ch_get_act_article", arguments)
        text = ((result.get("article") if "error" not in result else None) or {}).get("text") or ""
        version = result.get("version") or {}
        return Answer(
            text=text, contexts=[text], lookup={"as_of": result.get("as_of"), "version_id": version.get("version_id")}
        )


class Sourced(System):
    """A system whose article came through `PublishedContexts`: its line says from where."""

    def __init__(self, inner: System, contexts: PublishedContexts, release: Release):
        self.inner, self.contexts, self.release = inner, contexts, release
        self.key, self.mode, self.config = inner.key, inner.mode, inner.config
        self.client = getattr(inner, "client", None) or getattr(getattr(inner, "inner", None), "client", None)

    def settings(self) -> dict:
        return {**self.inner.settings(), "items": f"release {self.release.name}"}

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        return self.inner.estimate_tokens(item)

    def backoff_s(self) -> float:
        return self.inner.backoff_s()

    def answer(self, item: dict) -> Answer:
        self.contexts.take_source()
        try:
            answer = self.inner.answer(item)
        except Exception as exc:  # PROTOCOL §4: answer "", the error on the line -- and where it was sought
            answer = Answer(text="", error=f"{type(exc).__name__}: {exc}")
        source = self.contexts.take_source()
        if source is not None:
            answer.extras = {**answer.extras, "context_source": source}
        return answer


def _route_contexts(system: System, contexts: PublishedContexts) -> None:
    """current/pit (also inside a +verify wrapper) take their article through the published cache."""
    inner = getattr(system, "inner", system)
    if isinstance(inner, ContextSystem):
        inner.call_tool = contexts.call_tool


@dataclass(frozen=True)
class ReleaseRun:
    release: Release
    summaries: list[RunSummary]


def run_release(
    spec: str,
    systems: list[str],
    root: Path | str,
    *,
    langs: list[str] | None = None,
    tools=None,
    endpoints: dict | None = None,
    confirm: bool = False,
    sample_per_lang: int = 0,
    limit: int = 0,
    workers: int = 1,
    retry_errors: bool = True,
    new_run: bool = False,
    echo: Callable[[str], None] | None = None,
) -> ReleaseRun:
    """Validate the release `spec` (release:REV, release-dir:PATH), then run every system on its core
    per language into the release's results folder. `tools`: our PitTools, None without a corpus."""
    release = open_release(spec, root)
    validate_release(release)
    contexts = PublishedContexts(release, tools)
    items = {
        lang: select_items(core, sample_per_lang=sample_per_lang, limit=limit)
        for lang, core in core_items(release).items()
    }
    summaries = []
    for key in systems:
        parsed = parse_system_key(key)
        if parsed.tool_calls and tools is None:
            raise ReleaseError(key, "agentic runs call our tools over our corpus; build it first (run --source live)")
        every = [item for lang_items in items.values() for item in lang_items]
        if parsed.mode == "oracle":
            system: System = ReleaseOracle()
        elif parsed.mode == "recite":
            system = Sourced(ReleaseRecite(contexts), contexts, release)
        elif parsed.slug is None:
            raise ReleaseError(key, "our model-free systems read our own corpus, not a release; run them on our build")
        else:
            inner = prepare_system(key, every, tools=tools, endpoints=endpoints, confirm=confirm, echo=echo)
            _route_contexts(inner, contexts)
            system = Sourced(inner, contexts, release)
        try:
            for lang, lang_items in items.items():
                if lang_items:
                    path = results_path(release.results_dir, key, lang)
                    summaries.append(
                        run_items(system, lang_items, path, workers=workers, retry_errors=retry_errors, new_run=new_run)
                    )
        finally:
            client = getattr(system, "client", None)
            if client is not None:
                client.close()
        if parsed.mode != "oracle":  # §8: recite and the model modes have run reports
            settings = {
                "reasoning_effort": system.config.reasoning_effort if system.config else None,
                "workers": workers,
                "sample_per_lang": sample_per_lang,
                "seed": SEED,
                "temperature": system.config.temperature if system.config else 0.0,
            }
            write_run_report(parsed.mode, release.results_dir, release.report_dir, items.__getitem__, settings)
    return ReleaseRun(release, summaries)
