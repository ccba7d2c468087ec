"""core_split -> oracle_gate [blocking check] -> results[system|lang] -> scored_results[system|lang].

The oracle runs first, over every bench language, behind a blocking check
(`oracle_scores_one`): it proves builder and scorer agree, so a failure stops
every model run downstream before anything is spent (card, "How to reproduce" step 2).
Systems are a dynamic partition axis (`systems`); register keys with
`register_systems(instance, keys)` before materialising them.
"""


from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import date

import dagster as dg

from chpit_assets.bench.items import core_path
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.client import EndpointConfig
from chpit_assets.runs.runner import (
    load_log,
    prepare_system,
    read_jsonl,
    results_path,
    run_items,
    scored_path,
    scored_view,
    write_jsonl_atomic,
)
from chpit_assets.runs.systems import build_system, parse_system_key

from ..metadata import data_version
from ..partitions import BENCH_LANGS, lang_partitions
from ..resources import ChpitStore

GROUP = "runs"
DEFAULT_SYSTEMS: tuple[str, ...] = ("oracle", "recite")
"""What `make run` runs on the sample: no model, no network."""

systems_partitions = dg.DynamicPartitionsDefinition(name="systems")
system_lang_partitions = dg.MultiPartitionsDefinition({"system": systems_partitions, "lang": lang_partitions})


def register_systems(instance: dg.DagsterInstance, keys: list[str] | tuple[str, ...]) -> None:
    """Add system keys to the `systems` axis, refusing unknown keys before Dagster ever sees them."""
    for key in keys:
        parse_system_key(key)
    instance.add_dynamic_partitions(systems_partitions.name, list(keys))


class ModelEndpoint(dg.ConfigurableResource):
    """The model behind `<slug>/<mode>` systems. Empty `base_url` = the local SmolLM2 server, started per run.

    For a hosted router: base_url, model (the pinned slug), api_key_env (the variable NAME, never the key),
    prices for the estimate, and confirm=True (or CHPIT_CONFIRM_SPEND=1) after reading the estimate (R3)."""

    slug: str = "smollm2-135m"
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    workers: int = 2
    confirm: bool = False
    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    timeout_s: float = 300.0
    # R3's published settings; a small local model may ramble to the limit, so local runs often lower it.
    max_tokens: int = 8192
    retry_max_tokens: int = 16384

    @contextmanager
    def endpoints(self, slug: str | None) -> Iterator[dict[str, EndpointConfig]]:
        """{slug: config} for a model system, {} for oracle/recite (which must not start a server)."""
        if slug is None or slug != self.slug:
            yield {}  # an unconfigured slug becomes build_system's UnknownSystemError
            return
        settings = dict(api_key_env=self.api_key_env or None, timeout_s=self.timeout_s,
                        max_tokens=self.max_tokens, retry_max_tokens=self.retry_max_tokens,
                        price_input_per_mtok=self.price_input_per_mtok, price_output_per_mtok=self.price_output_per_mtok)
        if self.base_url:
            yield {slug: EndpointConfig(self.base_url, self.model or slug, **settings)}
            return
        from chpit_assets.runs.local_model import LocalModelServer

        # One llama.cpp slot per worker, so parallel workers really run in parallel.
        with LocalModelServer(parallel=max(1, self.workers)) as server:
            yield {slug: EndpointConfig(f"{server.base_url}/v1", self.model or server.model, **settings)}


class RunsConfig(dg.Config):
    retry_errors: bool = False  # re-ask items whose latest line is an error
    today: str = ""  # ISO date the tools treat as today (recite, current); empty = the real date


def _tools(chpit: ChpitStore, today: str) -> PitTools:
    return PitTools(chpit.released_store(), today=date.fromisoformat(today) if today else None)


def _core_items(chpit: ChpitStore, lang: str) -> list[dict]:
    path = core_path(chpit.build_dir, lang)
    if not path.exists():
        raise dg.Failure(f"no core items for {lang}: {path} is missing (materialise core_split[{lang}] first)")
    return read_jsonl(path)


def _file_version(path) -> dg.DataVersion:
    return data_version(path.read_bytes()) if path.exists() else dg.DataVersion("empty")


def score_partition(chpit: ChpitStore, system_key: str, lang: str) -> tuple[list[dict], list[str]]:
    """Write `{lang}.scored.jsonl` (the report's input) from the run log; returns (lines, missing ids)."""
    items = _core_items(chpit, lang)
    lines, missing = scored_view(items, load_log(results_path(chpit.results_dir, system_key, lang)), system_key)
    write_jsonl_atomic(scored_path(chpit.results_dir, system_key, lang), lines)
    return lines, missing


def _verdict_metadata(lines: list[dict], missing: list[str]) -> dict:
    labels: dict[str, int] = {}
    for line in lines:
        labels[line["verdict"]["label"]] = labels.get(line["verdict"]["label"], 0) + 1
    correct = labels.get("grounded_correct", 0)
    return {
        "n": len(lines),
        "missing": len(missing),
        "errors": sum(line["error"] is not None for line in lines),
        "correct_share": round(correct / len(lines), 4) if lines else 0.0,
        "labels": dg.MetadataValue.json(dict(sorted(labels.items()))),
    }


def built_langs(chpit: ChpitStore) -> list[str]:
    """The bench languages this build has a core split for (`make run --langs de` builds one)."""
    return [lang for lang in BENCH_LANGS if core_path(chpit.build_dir, lang).exists()]


@dg.asset(group_name=GROUP, deps=["core_split"], kinds={"python"})
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
    ],
    # Bound here, not in Definitions: the defaults (local SmolLM2) need no binding, and a run points
    # at another endpoint through run config `resources: {model: {config: {...}}}`.
    resource_defs={"model": ModelEndpoint.configure_at_launch()},
    kinds={"python"},
)
def results(context: dg.AssetExecutionContext, config: RunsConfig, chpit: ChpitStore, model: ModelEndpoint) -> dg.MaterializeResult:
    """data/results/{system}/{lang}.jsonl: one line per core item, resumable, with receipts (R3)."""
    keys = context.partition_key.keys_by_dimension
    system_key, lang = keys["system"], keys["lang"]
    items = _core_items(chpit, lang)
    tools = _tools(chpit, config.today)
    path = results_path(chpit.results_dir, system_key, lang)
    slug = parse_system_key(system_key).slug
    if slug is None:
        # oracle and recite cost nothing and answer from the current store: never resume stale answers.
        path.unlink(missing_ok=True)
    with model.endpoints(slug) as endpoints:
        system = prepare_system(system_key, items, tools=tools, endpoints=endpoints, confirm=model.confirm,
                                echo=context.log.warning)
        try:
            # One shared connection suits the lookup-only systems; a model run can last hours and must
            # not hold the store open against the nightly build's writers, so each tool call opens its own.
            with tools.session() if slug is None else nullcontext():
                summary = run_items(system, items, path, workers=model.workers, retry_errors=config.retry_errors)
        finally:
            client = getattr(system, "client", None)
            if client is not None:
                client.close()
    return dg.MaterializeResult(
        data_version=_file_version(path),
        metadata={"path": dg.MetadataValue.path(str(path)), **summary.metadata()},
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
