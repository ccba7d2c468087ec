"""core_split -> oracle_gate [blocking check] -> results[system|lang] -> scored_results[system|lang].

The oracle runs first, over every bench language, behind a blocking check
(`oracle_scores_one`): it proves builder and scorer agree, so a failure stops
every model run downstream before anything is spent (card, "How to reproduce" step 2).
Systems are a dynamic partition axis (`systems`); register keys with
`register_systems(instance, keys)` before materialising them.
"""

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg

from chpit_assets.bench.items import SEED, core_path
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs import run_report as run_reports
from chpit_assets.runs.client import EndpointConfig, spend_confirmed
from chpit_assets.runs.errors import SpendNotConfirmedError
from chpit_assets.runs.runner import (
    errored,
    load_log,
    log_status,
    prepare_system,
    read_jsonl,
    repeats_path,
    repeats_view,
    results_path,
    run_items,
    scored_path,
    scored_view,
    write_jsonl_atomic,
)
from chpit_assets.runs.sample import select_items
from chpit_assets.runs.systems import LOOKUP_MODES, build_system, parse_system_key

from ..metadata import data_version
from ..partitions import BENCH_LANGS, lang_partitions
from ..resources import ChpitStore

GROUP = "runs"
# Every system without a model: what `make run` and the nightly run (issue 16: cite/search).
DEFAULT_SYSTEMS: tuple[str, ...] = LOOKUP_MODES
"""What `make run` runs on the sample: no model, no network."""

SYSTEMS_AXIS = "systems"
systems_partitions = dg.DynamicPartitionsDefinition(name=SYSTEMS_AXIS)
system_lang_partitions = dg.MultiPartitionsDefinition({"system": systems_partitions, "lang": lang_partitions})


def register_systems(instance: dg.DagsterInstance, keys: Sequence[str]) -> None:
    """Add system keys to the `systems` axis, refusing unknown keys before Dagster ever sees them."""
    for key in keys:
        parse_system_key(key)
    instance.add_dynamic_partitions(SYSTEMS_AXIS, list(keys))


class ModelEndpoint(dg.ConfigurableResource):
    """The model behind `<slug>/<mode>` systems. Empty `base_url` = the local SmolLM2 server, started per run.

    For a hosted router: base_url, model (the pinned slug), api_key_env (the variable NAME, never the key),
    prices (USD per 1M tokens; a paid endpoint without them is refused, PROTOCOL §7), and confirm=True (or
    CHPIT_CONFIRM_SPEND=1 / CHPIT_CONFIRM=1) after reading the estimate (R3). A base URL carrying a
    credential (user info, a query key) is passed by the NAME of a variable holding it, `base_url_env`,
    so the run storage never holds the credential (issue 15 item 5)."""

    slug: str = "smollm2-135m"
    base_url: str = ""
    base_url_env: str = ""
    model: str = ""
    api_key_env: str = ""
    workers: int = 1  # measured: 2 local workers are slower than 1 on 2 cores (docs/perf/runs.md)
    confirm: bool = False
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None
    timeout_s: float = 300.0
    reasoning_effort: str = "minimal"  # PROTOCOL §4; empty = send no `reasoning`
    # R3's published settings; a small local model may ramble to the limit, so local runs often lower it.
    max_tokens: int = 8192
    retry_max_tokens: int = 16384
    # The model's training cutoff, ISO date (issue 25): recorded in every receipt for the report's
    # cutoff split; empty = unknown (no split).
    cutoff: str = ""

    def resolved_base_url(self) -> str:
        if self.base_url_env:
            url = os.environ.get(self.base_url_env, "").strip()
            if not url:
                raise dg.Failure(f"model endpoint: ${self.base_url_env} (base_url_env) is unset or empty")
            return url
        return self.base_url

    def checked_cutoff(self) -> str | None:
        if not self.cutoff:
            return None
        try:
            return date.fromisoformat(self.cutoff).isoformat()
        except ValueError:
            raise dg.Failure(f"model endpoint: cutoff {self.cutoff!r} is not an ISO date (YYYY-MM-DD)") from None

    def settings(self) -> dict:
        """The run report's settings (PROTOCOL §8)."""
        return {
            "reasoning_effort": self.reasoning_effort or None,
            "workers": self.workers,
            "temperature": 0.0,
            "max_tokens_ladder": [self.max_tokens, self.retry_max_tokens],
        }

    @contextmanager
    def endpoints(self, slug: str | None) -> Iterator[dict[str, EndpointConfig]]:
        """{slug: config} for a model system, {} for oracle/recite (which must not start a server)."""
        if slug is None or slug != self.slug:
            yield {}  # an unconfigured slug becomes build_system's UnknownSystemError
            return
        settings: dict[str, Any] = dict(
            api_key_env=self.api_key_env or None,
            timeout_s=self.timeout_s,
            max_tokens=self.max_tokens,
            retry_max_tokens=self.retry_max_tokens,
            reasoning_effort=self.reasoning_effort or None,
            price_input_per_mtok=self.price_input_per_mtok,
            price_output_per_mtok=self.price_output_per_mtok,
            cutoff=self.checked_cutoff(),
        )
        base_url = self.resolved_base_url()
        if base_url:
            yield {slug: EndpointConfig(base_url, self.model or slug, **settings)}
            return
        from chpit_assets.runs.local_model import LocalModelServer, server_version

        # One llama.cpp slot per worker, so parallel workers really run in parallel.
        with LocalModelServer(parallel=max(1, self.workers)) as server:
            # Issue 14 item 5: answers at temperature 0 depend on the weights, the server and the slots.
            described = {
                "weights_sha256": server.model_sha256,
                "server": server_version(),
                "parallel_slots": max(1, self.workers),
            }
            yield {
                slug: EndpointConfig(f"{server.base_url}/v1", self.model or server.model, server=described, **settings)
            }


class RunsConfig(dg.ConfigurableResource):
    """Which items a (system, lang) run asks and how it meets its earlier log: the `runs` resource, so
    one backfill's run config (`resources: {runs: {config: ...}}`) reaches every run that asks items."""

    retry_errors: bool = True  # PROTOCOL §7: items whose winning line is an error are asked again
    new_run: bool = False  # start over when the log was made with other settings (the old log is kept aside)
    sample_per_lang: int = 0  # PROTOCOL §6: N items per language (the published agentic rows: 100); 0 = all
    limit: int = 0  # the first N items (by id) of that, for a quick look; 0 = all
    today: str = ""  # ISO date the tools treat as today (recite, current); empty = the real date
    # Model systems only: ask every item this many times (issue 25); repeat 0 alone feeds the published files.
    repeats: int = 1
    items: str = ""  # release:REV / release-dir:PATH: a published release's core (chpit_assets/release); empty = ours


def _tools(chpit: ChpitStore, today: str) -> PitTools:
    return PitTools(
        chpit.released_store(), today=date.fromisoformat(today) if today else None, search_dir=chpit.search_dir
    )


def run_items_for(chpit: ChpitStore, lang: str, config: RunsConfig) -> list[dict]:
    """The items a (system, lang) run asks: the core split, subsampled and limited (PROTOCOL §6)."""
    return select_items(_core_items(chpit, lang), sample_per_lang=config.sample_per_lang, limit=config.limit)


def write_run_report(chpit: ChpitStore, mode: str, config: RunsConfig, settings: dict) -> Path:
    """Rewrite `run-report-{mode}.json` (PROTOCOL §8) from every run log of that mode in results/."""

    def items_of(lang: str) -> list[dict]:
        return run_items_for(chpit, lang, config) if core_path(chpit.build_dir, lang).exists() else []

    return run_reports.write_run_report(
        mode,
        chpit.results_dir,
        chpit.report_dir,
        items_of,
        {**settings, "sample_per_lang": config.sample_per_lang, "seed": SEED},
    )


def _core_items(chpit: ChpitStore, lang: str) -> list[dict]:
    path = core_path(chpit.build_dir, lang)
    if not path.exists():
        raise dg.Failure(f"no core items for {lang}: {path} is missing (materialise core_split[{lang}] first)")
    return read_jsonl(path)


def _file_version(path) -> dg.DataVersion:
    return data_version(path.read_bytes()) if path.exists() else dg.DataVersion("empty")


def _refuse_unconfirmed_spend(config: EndpointConfig | None, confirm: bool, system_key: str) -> None:
    """PROTOCOL §7: a paid endpoint without confirmation is refused before any request to it, the
    pre-flight probe included; the CLI prints the estimate over every language (request.spend_estimate)."""
    if config is not None and not config.is_local and not spend_confirmed(confirm):
        raise SpendNotConfirmedError(
            f"{system_key}: {config.public_url} is a paid endpoint; pass --confirm-spend or set "
            "CHPIT_CONFIRM_SPEND=1 (the published CHPIT_CONFIRM=1 works too)",
            {},
        )


def score_partition(chpit: ChpitStore, system_key: str, lang: str) -> tuple[list[dict], list[str]]:
    """Write `{lang}.scored.jsonl` (the report's input) from the run log, and `{lang}.repeats.jsonl`
    when the log holds more than one repeat; returns (lines, missing ids) of repeat 0."""
    items = _core_items(chpit, lang)
    log = results_path(chpit.results_dir, system_key, lang)
    lines, missing = scored_view(items, load_log(log), system_key)
    write_jsonl_atomic(scored_path(chpit.results_dir, system_key, lang), lines)
    every = repeats_view(items, log, system_key)
    if every:
        write_jsonl_atomic(repeats_path(chpit.results_dir, system_key, lang), every)
    else:
        repeats_path(chpit.results_dir, system_key, lang).unlink(missing_ok=True)
    return lines, missing


def _verdict_metadata(lines: list[dict], missing: list[str]) -> dict:
    labels: dict[str, int] = {}
    for line in lines:
        labels[line["verdict"]["label"]] = labels.get(line["verdict"]["label"], 0) + 1
    correct = labels.get("grounded_correct", 0)
    return {
        "n": len(lines),
        "missing": len(missing),
        "errors": sum(map(errored, lines)),
        "correct_share": round(correct / len(lines), 4) if lines else 0.0,
        "labels": dg.MetadataValue.json(dict(sorted(labels.items()))),
    }


def built_langs(chpit: ChpitStore) -> list[str]:
    """The bench languages this build has a core split for (`make run --langs de` builds one)."""
    return [lang for lang in BENCH_LANGS if core_path(chpit.build_dir, lang).exists()]


@dg.asset(group_name=GROUP, deps=["core_split", "build_report"], kinds={"python"})
def oracle_gate(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """R1: the oracle over every built language's core split, scored. Its blocking check must pass first."""
    langs = built_langs(chpit)
    if not langs:
        raise dg.Failure(f"no core split in {chpit.build_dir} for any of {', '.join(BENCH_LANGS)}: build first")
    tools = PitTools(chpit.released_store())
    per_lang = {}
    with tools.session():
        for lang in langs:
            items = _core_items(chpit, lang)
            path = results_path(chpit.results_dir, "oracle", lang)
            # Never resumed: the gate must judge today's resolver on today's items, not old answers.
            path.unlink(missing_ok=True)
            run_items(build_system("oracle", tools=tools), items, path)
            lines, missing = score_partition(chpit, "oracle", lang)
            per_lang[lang] = _verdict_metadata(lines, missing)
            context.log.info(f"oracle [{lang}]: {per_lang[lang]['correct_share']} of {len(lines)}")
    return dg.MaterializeResult(
        metadata={f"{lang}_{k}": v for lang, meta in per_lang.items() for k, v in meta.items()},
    )


@dg.asset(
    partitions_def=system_lang_partitions,
    group_name=GROUP,
    deps=[
        oracle_gate,
        dg.AssetDep("core_split", partition_mapping=dg.MultiToSingleDimensionPartitionMapping("lang")),
        # The search systems answer from the index: a re-indexed language makes its results stale. A
        # dependency is per asset, not per system key, so every system's results follow the index.
        dg.AssetDep("search_index", partition_mapping=dg.MultiToSingleDimensionPartitionMapping("lang")),
    ],
    kinds={"python"},
)
def results(
    context: dg.AssetExecutionContext, runs: RunsConfig, chpit: ChpitStore, model: ModelEndpoint
) -> dg.MaterializeResult:
    """data/results/{system}/{lang}.jsonl: one line per asked core item, resumable, with receipts (R3, PROTOCOL §7)."""
    keys = context.partition_key.keys_by_dimension
    system_key, lang = keys["system"], keys["lang"]
    items = run_items_for(chpit, lang, runs)
    tools = _tools(chpit, runs.today)
    path = results_path(chpit.results_dir, system_key, lang)
    parsed = parse_system_key(system_key)
    if runs.repeats < 1:
        raise dg.Failure(f"runs config: repeats must be >= 1, got {runs.repeats}")
    repeats = runs.repeats if parsed.slug is not None else 1  # a lookup answers the same every time
    if parsed.slug is None:
        # oracle and recite cost nothing and answer from the current store: never resume stale answers.
        path.unlink(missing_ok=True)
    with model.endpoints(parsed.slug) as endpoints:
        _refuse_unconfirmed_spend(endpoints.get(parsed.slug or ""), model.confirm, system_key)
        system = prepare_system(
            system_key,
            items,
            tools=tools,
            endpoints=endpoints,
            confirm=model.confirm,
            echo=context.log.warning,
            repeats=repeats,
        )
        try:
            # One shared connection suits the lookup-only systems; a model run can last hours and must
            # not hold the store open against the nightly build's writers, so each tool call opens its own.
            with tools.session() if parsed.slug is None else nullcontext():
                summary = run_items(
                    system,
                    items,
                    path,
                    workers=model.workers,
                    retry_errors=runs.retry_errors,
                    new_run=runs.new_run,
                    repeats=repeats,
                )
        finally:
            client = getattr(system, "client", None)
            if client is not None:
                client.close()
    status = log_status(items, path, repeats)
    # §8's run reports are the published runs' (recite and the model modes); the oracle and our
    # model-free systems have none.
    if parsed.run_report:
        report = write_run_report(chpit, parsed.mode, runs, model.settings())
        context.log.info(f"{report} rewritten")
    if status["errored"]:
        context.log.warning(
            f"{system_key} [{lang}]: {status['errored']} of {status['items']} items errored; "
            f"commonest: {status['commonest_error']}"
        )
    return dg.MaterializeResult(
        data_version=_file_version(path),
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            **summary.metadata(),
            **{f"log_{k}": v for k, v in status.items() if k != "commonest_error"},
            "commonest_error": status["commonest_error"] or "",
        },
    )


@dg.asset(
    partitions_def=system_lang_partitions,
    group_name=GROUP,
    deps=[results],
    kinds={"json"},
)
def scored_results(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """data/results/{system}/{lang}.scored.jsonl: latest answer per item in item order, re-scored (S1-S8)."""
    keys = context.partition_key.keys_by_dimension
    lines, missing = score_partition(chpit, keys["system"], keys["lang"])
    path = scored_path(chpit.results_dir, keys["system"], keys["lang"])
    return dg.MaterializeResult(
        data_version=_file_version(path),
        metadata={"path": dg.MetadataValue.path(str(path)), **_verdict_metadata(lines, missing)},
    )
