"""The whole pipeline as one story: what `make run`, the nightly schedule, the new-edition sensor and
`python -m chpit_assets run|nightly` all run, through the `rebuild` op of the `benchmark` and
`nightly` jobs (chpit_assets.defs.ops.jobs).

    build[lang] for each language -> build_report -> oracle_gate (blocking check) -> the systems
    -> report -> publish_gate (CRITICAL blocking checks) -> hf_dataset

One Dagster run of `benchmark` (or `nightly`) per invocation: its `rebuild` op starts each stage as
a run of its own, executed in the same process, one after the other. A run cannot mix one language
partition, the unpartitioned gate and the (system, lang) partitions, and running the stages in
sequence from one place is what makes the chain stop at the first failure. Every stage run is
tagged `chpit/parent=<the parent run id>`, so the UI lists one invocation's stage runs with one
tag filter, and the parent run's own log tells the story stage by stage (issue 14.6).

After the publication, the snapshot of the catalog the run built from is recorded
(fedlex.catalog_diff.record_built): the new-edition sensor compares Fedlex with what was built.

A failed stage raises `PipelineFailed` naming the stage, its run and the reason (failed steps'
messages, which name the act, edition, file or url; the gate's check metadata): nothing after it
runs, and `hf_dataset` never writes, so `data/publish/` stays the last good publication.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import dagster as dg

from chpit_assets.defs.partitions import BENCH_LANGS, register_langs
from chpit_assets.defs.resources import ChpitStore, FedlexSource
from chpit_assets.defs.runs.checks import oracle_failures
from chpit_assets.fedlex.catalog_diff import Snapshot, record_built
from chpit_assets.runs.systems import LOOKUP_MODES

PARENT_TAG = "chpit/parent"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
"""Stage runs log warnings only on the console: the parent's stage lines are the story."""

CATALOG_STAGE = "catalog"
SPEND_STAGE = "spend"
"""The stage name of a paid run refused before any call (PROTOCOL §7); the CLI exits 2 on it."""


class PipelineFailed(Exception):
    """A stage failed (or was refused); nothing after it ran."""

    def __init__(self, stage: str, run_id: str, reason: str):
        super().__init__(f"{stage} failed (run {run_id}): {reason}")
        self.stage, self.run_id, self.reason = stage, run_id, reason


def failure_reasons(result: dg.ExecuteInProcessResult) -> str:
    """Each failed step's message and each failed check, in one line each: what to fix, without the UI."""
    steps = [
        f"{e.step_key}: {e.step_failure_data.error.message.strip()}"
        for e in result.get_step_failure_events()
        if e.step_failure_data.error
    ]
    checks = [
        f"{c.check_name}: {c.description or c.metadata}" for c in result.get_asset_check_evaluations() if not c.passed
    ]
    return "\n".join(steps + checks) or "see the run's events"


def run_pipeline(
    langs: Sequence[str],
    systems: Sequence[str] = LOOKUP_MODES,
    *,
    instance: dg.DagsterInstance,
    tags: dict[str, str],
    fedlex: dict | None = None,
    model: dict | None = None,
    runs: dict | None = None,
    publication: dict | None = None,
    echo: Callable[[str], None] = print,
) -> None:
    """Build `langs`, then gate, run `systems`, report and publish; raise PipelineFailed at the first failure.

    `fedlex`, `model` and `publication` are those resources' run config, `runs` the `results` op's
    (RunsConfig); empty = the defaults (the shipped sample, the local model, data/publish/ only)."""
    from chpit_assets.definitions import defs  # the code location's own definitions, whoever calls
    from chpit_assets.defs.runs.pipeline import run_benchmark

    def stage(job: dg.JobDefinition, label: str, run_config: dict, **kwargs) -> None:
        result = job.execute_in_process(
            instance=instance, tags=tags, raise_on_error=False, run_config={**QUIET, **run_config}, **kwargs
        )
        echo(f"{label}: {'ok' if result.success else 'FAILED'} (run {result.run_id})")
        if not result.success:
            raise PipelineFailed(label, result.run_id, failure_reasons(result))

    # What this run builds from, recorded once it is published: the new-edition sensor's baseline.
    source = FedlexSource(**(fedlex or {}))
    try:
        built = Snapshot.of({lang: source.load_catalog(lang) for lang in langs})
    except Exception as exc:  # the typed catalog errors name the source, url or language
        raise PipelineFailed(CATALOG_STAGE, "-", f"{type(exc).__name__}: {exc}") from exc
    register_langs(instance, langs)  # only languages the catalog has editions in become partitions
    for lang in langs:
        stage(
            defs.resolve_job_def("build"),
            f"build [{lang}]",
            {"resources": {"fedlex": {"config": fedlex or {}}}},
            partition_key=lang,
        )
    stage(defs.resolve_job_def("build_report_job"), "build_report_job", {})
    bench_langs = [lang for lang in langs if lang in BENCH_LANGS]
    refusal = unconfirmed_spend(systems, bench_langs, model or {}, runs or {})
    if refusal:
        raise PipelineFailed(SPEND_STAGE, "-", refusal)
    run_config = {**QUIET, "resources": {"model": {"config": model or {}}}, "ops": {"results": {"config": runs or {}}}}
    if not run_benchmark(defs, instance, systems, bench_langs, run_config=run_config, echo=echo, tags=tags):
        reasons = oracle_failures(ChpitStore()) or ["a system or the report failed; see the runs above"]
        raise PipelineFailed("oracle_gate, systems or report", "-", "; ".join(reasons))
    partial = partial_run(fedlex or {}, runs or {})
    if partial:
        # The gate would refuse it anyway (items lost, oracle verdicts missing): say why, publish nothing.
        echo(f"hf_dataset: not published ({partial}: a partial run; data/publish/ is unchanged)")
        return
    stage(
        defs.resolve_implicit_global_asset_job_def(),
        "hf_dataset",
        {"resources": {"publication": {"config": publication or {}}}},
        asset_selection=[dg.AssetKey("publish_gate"), dg.AssetKey("hf_dataset")],
    )
    record_built(ChpitStore().built_catalog_path(source.source_id), built)


def partial_run(fedlex: dict, runs: dict) -> str:
    """Why this run covers less than the whole benchmark (so it is not published), or ""."""
    reasons = [
        f"{flag} {value}"
        for flag, value in (
            ("--sr-numbers", ",".join(fedlex.get("sr_numbers") or [])),
            ("--sample-per-lang", runs.get("sample_per_lang")),
            ("--limit", runs.get("limit")),
        )
        if value
    ]
    return ", ".join(reasons)


def unconfirmed_spend(systems: Sequence[str], langs: Sequence[str], model: dict, runs: dict) -> str:
    """PROTOCOL §7: a paid run without CHPIT_CONFIRM(_SPEND)=1 / confirm prints the estimate and stops
    before any system runs. Returns the message, or "" when the run may go on."""
    from chpit_assets.bench.items import core_path
    from chpit_assets.defs.runs.assets import ModelEndpoint
    from chpit_assets.runs.client import EndpointConfig, estimate_cost, spend_confirmed
    from chpit_assets.runs.runner import read_jsonl
    from chpit_assets.runs.sample import select_items
    from chpit_assets.runs.systems import estimate_tokens, model_systems, parse_system_key

    paid = model_systems(systems)
    if not paid:
        return ""
    endpoint = ModelEndpoint(**model)
    config = EndpointConfig(
        endpoint.resolved_base_url() or "http://127.0.0.1/",
        endpoint.model or endpoint.slug,
        price_input_per_mtok=endpoint.price_input_per_mtok,
        price_output_per_mtok=endpoint.price_output_per_mtok,
    )
    if config.is_local or spend_confirmed(endpoint.confirm):
        return ""
    build_dir = ChpitStore().build_dir
    items = [
        item
        for lang in langs
        if core_path(build_dir, lang).exists()
        for item in select_items(
            read_jsonl(core_path(build_dir, lang)),
            sample_per_lang=runs.get("sample_per_lang", 0),
            limit=runs.get("limit", 0),
        )
    ]
    lines = []
    for key in paid:
        tokens = [estimate_tokens(parse_system_key(key).mode, item) for item in items]
        estimate = estimate_cost(config, len(items), sum(t[0] for t in tokens), sum(t[1] for t in tokens))
        lines.append(f"estimate {key}: {json.dumps({**estimate, 'usd': round(estimate['usd'], 4)})}")
    return "\n".join(
        lines
        + [
            f"not run: {config.public_url} is a paid endpoint; pass --confirm-spend or set "
            "CHPIT_CONFIRM_SPEND=1 (the published CHPIT_CONFIRM=1 works too)"
        ]
    )


def execute(
    job_name: str, config: dict, *, instance: dg.DagsterInstance, tags: dict[str, str]
) -> tuple[str, PipelineFailed | None]:
    """One run of `benchmark` or `nightly` in this process, its `rebuild` op configured with `config`.

    Returns the run id and, when it failed, the stage that failed (from the op's Failure metadata)."""
    from chpit_assets.definitions import defs
    from chpit_assets.instance import process_tags

    result = defs.resolve_job_def(job_name).execute_in_process(
        instance=instance,
        tags={**tags, **process_tags()},
        raise_on_error=False,
        # The parent's own failure is what this returns, so its console would only repeat it with a trace.
        run_config={
            "loggers": {"console": {"config": {"log_level": "CRITICAL"}}},
            "ops": {"rebuild": {"config": config}},
        },
    )
    if result.success:
        return result.run_id, None
    for event in result.get_step_failure_events():
        failure = event.step_failure_data.user_failure_data
        if failure is not None and "stage" in failure.metadata:
            meta = {key: str(value.value) for key, value in failure.metadata.items()}
            return result.run_id, PipelineFailed(meta["stage"], meta["stage_run"], meta["reason"])
    return result.run_id, PipelineFailed(job_name, result.run_id, failure_reasons(result))
