"""`python -m chpit_assets run`: the main job on the embedded default, as `make run` calls it.

One run of the `benchmark` job (chpit_assets.pipeline), whose stage runs build each language,
gate, run the systems, report and publish, so every materialisation, its metadata and data
versions land in the instance under $DAGSTER_HOME, visible later in `dagster dev`; then prints
per system and language what was answered, and where the outputs are.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable

from chpit_assets.fedlex.catalog import LANGS
from chpit_assets.fedlex.sparql import ENDPOINT
from chpit_assets.runs.systems import LOOKUP_MODES, MODEL_MODES

# Dagster (and chpit_assets.instance, chpit_assets.nightly, which import it) is imported only once
# the arguments are known to be good: a typo fails in well under a second.

DEFAULT_RUN_SYSTEMS = LOOKUP_MODES  # every system without a model


EXIT_USAGE = 2  # a bad argument, or a paid run without confirmation (PROTOCOL §7)
EXIT_SOME_ERRORED = 1  # the pipeline failed, or some items errored (issue 14 item 4)
EXIT_ALL_ERRORED = 3  # every item asked errored: the endpoint or the settings are broken
EXIT_INTERRUPTED = 130  # Ctrl-C: the backfill was cancelled (128 + SIGINT, what a shell reports for it)
BASE_URL_ENV = "CHPIT_MODEL_BASE_URL"  # carries a base URL with credentials past the run storage
SPARQL_URL_ENV = "CHPIT_SPARQL_URL"  # a mirror or proxy of Fedlex's endpoint
CELERY_BROKER_ENV = "CHPIT_CELERY_BROKER"
DEFAULT_BROKER = "pyamqp://guest@127.0.0.1:5672//"
EXECUTORS = ("in_process", "multiprocess", "celery")


def executor_config(executor: str, broker: str, queue: str) -> dict:
    """The `execution` run config of chpit_assets.executors.chpit_executor for every run of the backfill."""
    if executor == "celery":
        return {"celery": {"broker": broker, "backend": "rpc://", "config_source": {"task_default_queue": queue}}}
    return {executor: {}}


def run(
    langs: list[str],
    systems: list[str],
    model_config: dict,
    fedlex_config: dict,
    runs_config: dict | None = None,
    execution: dict | None = None,
) -> int:
    """One backfill of the benchmark over `langs` and `systems`, driven to its end here (chpit_assets.orchestration)."""
    from chpit_assets.orchestration import forkserver

    forkserver.start()  # the runs' fork server imports the code while this process does (issue 27.2)
    import dagster as dg

    # Output(data_version=...) is beta in Dagster 1.13 and says so on every run; the flag is deliberate.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    from chpit_assets.definitions import defs
    from chpit_assets.defs.resources import ChpitStore, FedlexSource
    from chpit_assets.instance import open_instance, prepare_instance
    from chpit_assets.langs import BENCH_LANGS
    from chpit_assets.orchestration import request
    from chpit_assets.orchestration.backfill import subset
    from chpit_assets.orchestration.invocation import invoke
    from chpit_assets.orchestration.target import TRIGGER_TAG, target_for

    runs_config = runs_config or {}
    instance = open_instance()
    prepare_instance(instance)
    problem = _unpublished_langs(instance, langs, FedlexSource(**fedlex_config))
    if problem:
        print(f"benchmark: FAILED at catalog: {problem}", file=sys.stderr)
        return EXIT_SOME_ERRORED
    request.register(instance, langs, systems)
    partial = request.partial_run(fedlex_config, runs_config)
    bounded = request.bounded_run(fedlex_config, runs_config, ChpitStore().root)
    store = ChpitStore(**bounded)
    asset_graph = defs.resolve_asset_graph()
    target = target_for(asset_graph, langs, systems, publish=not partial)
    started = time.time()
    outcome = invoke(
        instance,
        subset(target, asset_graph),
        tags={TRIGGER_TAG: "cli"},
        run_config=request.run_config(
            fedlex=fedlex_config, model=model_config, runs=runs_config, execution=execution, chpit=bounded
        ),
        title=f"benchmark {','.join(langs)}: {','.join(systems)}",
    )
    bench_langs = [lang for lang in langs if lang in BENCH_LANGS]
    if any(f.error == "SpendNotConfirmedError" for f in outcome.failures):
        estimates, refusal = request.spend_estimate(systems, bench_langs, model_config, runs_config, store.build_dir)
        print("\n".join(estimates))  # the published dry-run shape, one object per paid system (PROTOCOL §7)
        print(refusal, file=sys.stderr)
        return EXIT_USAGE
    return _outcome_exit(outcome, instance, systems, bench_langs, started, partial, store)


def _unpublished_langs(instance, langs: list[str], source) -> str:
    """A language becomes a partition only once its catalog has editions (issue 14.6): ask the catalog for
    each language not yet on the axis. Returns why one cannot be built, or ""."""
    from chpit_assets.defs.partitions import LANG_AXIS

    for lang in langs:
        if instance.has_dynamic_partition(LANG_AXIS, lang):
            continue
        try:
            source.load_catalog(lang)
        except Exception as exc:  # the typed catalog errors name the source, url or language
            return f"{type(exc).__name__}: {exc}"
    return ""


def _outcome_exit(outcome, instance, systems: list[str], langs: list[str], started: float, partial: str, store) -> int:
    """The summary lines and the exit code of a finished backfill (issue 14 item 4, issue 23.7)."""
    from chpit_assets.orchestration.stages import BUILD, publication_line

    if outcome.interrupted:
        _answers_kept(systems, langs, store)
        kept = sum(r.status.value == "SUCCESS" for r in outcome.runs)
        print(
            f"benchmark: interrupted (backfill {outcome.backfill_id}); {kept} finished stage(s) kept, "
            "nothing half-written; re-run to go on",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    build_failed = [f for f in outcome.failures if f.kind == BUILD]
    if build_failed:
        # A build failed: each failed step and why, naming the act, edition, file or url.
        print(f"benchmark: FAILED at {build_failed[0].stage} (backfill {outcome.backfill_id}):", file=sys.stderr)
        print("\n".join(f"  {f.line()}" for f in build_failed), file=sys.stderr)
        return EXIT_SOME_ERRORED
    summary = _run_summary(instance, systems, langs, started)
    if outcome.failures:
        first = outcome.failures[0]
        print(
            f"benchmark: FAILED at {first.stage} (backfill {outcome.backfill_id}, run {first.run_id}):", file=sys.stderr
        )
        print("\n".join(f"  {f.line()}" for f in outcome.failures), file=sys.stderr)
        return max(summary, EXIT_SOME_ERRORED)
    if partial:
        print(f"hf_dataset: not published ({partial}: a partial run; data/publish/ is unchanged)")
        print(f"a bounded run: its results and report are in {store.run_root} (data/results/ is untouched)")
        outputs = f"{store.results_dir}, {store.report_dir}/report.{{md,json,html}}"
    else:
        print(publication_line(instance, outcome.runs))
        outputs = "data/chpit.duckdb, data/build/, data/results/, data/report/report.{md,json,html}, data/publish/"
    print(f"benchmark: ok (backfill {outcome.backfill_id}); outputs: {outputs}")
    return summary


def _answers_kept(systems: list[str], langs: list[str], store) -> None:
    """After Ctrl-C (issue 23.7): the model answers each log keeps, which a re-run does not ask again.
    A lookup system's log is not named: it is rewritten whole by its next run."""
    from chpit_assets.runs.runner import errored, load_log, results_path
    from chpit_assets.runs.systems import parse_system_key

    for system in systems:
        for lang in langs:
            path = results_path(store.results_dir, system, lang)
            if parse_system_key(system).slug is None or not path.exists():
                continue
            answered = sum(not errored(line) for line in load_log(path).values())
            print(f"  {system} [{lang}]: {answered} answer(s) kept in {path}, not asked again", file=sys.stderr)


def _run_summary(instance, systems: list[str], langs: list[str], since: float) -> int:
    """Issue 14 item 4: per system and language, what the log holds for the items asked; the exit
    code says whether any (1) or every (3) item errored, naming the commonest error."""
    from collections import Counter

    import dagster as dg

    totals: Counter = Counter()
    errors: Counter = Counter()
    for system in systems:
        for lang in langs:
            key = str(dg.MultiPartitionKey({"system": system, "lang": lang}))
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(dg.AssetKey("results"), asset_partitions=[key], after_timestamp=since), limit=1
            ).records
            if not records:
                print(f"  {system} [{lang}]: not run (see the FAILED run above)")
                continue
            meta = {k: v.value for k, v in records[0].asset_materialization.metadata.items()}
            print(
                f"  {system} [{lang}]: {meta['log_answered']} answered, {meta['log_errored']} errored, "
                f"{meta['skipped_already_answered']} skipped (answered before), {meta['log_not_asked']} not asked "
                f"of {meta['log_items']}"
            )
            totals.update({"items": meta["log_items"], "errored": meta["log_errored"]})
            if meta["commonest_error"]:
                errors[meta["commonest_error"]] += meta["log_errored"]
    if not totals["errored"]:
        return 0
    commonest = errors.most_common(1)[0][0]
    every = totals["errored"] == totals["items"]
    share = f"all {totals['items']}" if every else f"{totals['errored']} of {totals['items']}"
    print(f"{share} items errored; commonest error: {commonest}", file=sys.stderr)
    return EXIT_ALL_ERRORED if every else EXIT_SOME_ERRORED


def _instance_checked(command: Callable[[], int]) -> int:
    """The command, or one line and exit 1 when the Dagster instance cannot be used (issue 18.4)."""
    from chpit_assets.instance import InstanceStorageError

    try:
        return command()
    except InstanceStorageError as exc:
        print(f"python -m chpit_assets: instance: {exc}", file=sys.stderr)
        return EXIT_SOME_ERRORED


def _fail(message: str) -> int:
    print(f"python -m chpit_assets run: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def check_run_args(args: argparse.Namespace, langs: list[str], systems: list[str]) -> str:
    """Issue 14 item 3: every argument checked before anything runs; the first problem, or ""."""
    from urllib.parse import urlsplit

    from chpit_assets.runs.client import EndpointConfig, redact_url
    from chpit_assets.runs.errors import UnknownSystemError
    from chpit_assets.runs.systems import parse_system_key

    unknown = sorted(set(langs) - set(LANGS))
    if unknown or not langs:
        return f"unknown language(s) {unknown or langs}; known: {', '.join(LANGS)}"
    if not systems:
        return "--systems is empty"
    for key in systems:
        try:
            slug = parse_system_key(key).slug
        except UnknownSystemError as exc:
            return str(exc)
        if slug is not None and slug != args.model_slug:
            return (
                f"system {key!r} names model {slug!r}, but the endpoint is configured for --model-slug "
                f"{args.model_slug!r}"
            )
    if args.base_url:
        parts = urlsplit(args.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return f"--base-url {redact_url(args.base_url)!r} is not an http(s) URL with a host"
    elif args.api_key_env or args.price_in is not None or args.price_out is not None:
        return "--api-key-env, --price-in and --price-out need --base-url (the local model is free)"
    if args.api_key_env and not args.api_key_env.isidentifier():
        return f"--api-key-env takes the NAME of an environment variable, not {args.api_key_env[:4]}..."
    if (args.price_in is None) != (args.price_out is None):
        return "--price-in and --price-out go together (USD per 1M input and output tokens)"
    if any(p is not None and p < 0 for p in (args.price_in, args.price_out)):
        return "--price-in and --price-out must be >= 0"
    paid = args.base_url and not EndpointConfig(args.base_url, "m").is_local
    if paid and args.price_in is None and any(parse_system_key(k).asks_model for k in systems):
        return (
            f"no price for model '{args.model or args.model_slug}': a paid endpoint needs "
            f"--price-in and --price-out (USD per 1M tokens) before anything is asked"
        )
    for name, value, low in (
        ("--sample-per-lang", args.sample_per_lang, 0),
        ("--limit", args.limit, 0),
        ("--workers", args.workers, 1),
        ("--max-tokens", args.max_tokens, 1),
    ):
        if value < low:
            return f"{name} must be >= {low}, got {value}"
    if not args.timeout > 0:
        return f"--timeout must be > 0 seconds, got {args.timeout}"
    if args.sr_numbers.strip() and args.source != "live":
        return "--sr-numbers selects acts of live Fedlex: it needs --source live (the sample has only its own acts)"
    kind, _, where = args.items.partition(":")
    if args.items and (kind not in ("release", "release-dir") or not where):
        return f"--items takes release:REVISION or release-dir:PATH, not {args.items!r}"
    from chpit_assets.runs.options import check_model_options

    return check_model_options(args, systems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chpit_assets", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="materialise the pipeline for the given languages")
    run_parser.add_argument(
        "--langs",
        default="de,fr,it",
        help=f"comma-separated, of {','.join(LANGS)} (default: the languages CH-PiT publishes)",
    )
    run_parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_RUN_SYSTEMS),
        help=f"comma-separated system keys: {', '.join(LOOKUP_MODES)} (no model; the default), "
        f"<model-slug>/{{{','.join(MODEL_MODES)}}}",
    )
    fedlex = run_parser.add_argument_group("Fedlex", "where the catalog and the XML editions come from")
    fedlex.add_argument(
        "--source",
        choices=("sample", "live"),
        default="sample",
        help="the shipped sample (offline, default) or live Fedlex (SPARQL + filestore)",
    )
    fedlex.add_argument("--sr-numbers", default="", help="live only: comma-separated SR numbers (default: every act)")
    fedlex.add_argument(
        "--sparql-url",
        default=os.environ.get(SPARQL_URL_ENV) or ENDPOINT,
        help=f"live only: the SPARQL endpoint (default ${SPARQL_URL_ENV}, else {ENDPOINT})",
    )
    model = run_parser.add_argument_group(
        "model endpoint", "for <model-slug>/<mode> systems; default: the local SmolLM2 server, started per run"
    )
    model.add_argument("--model-slug", default="smollm2-135m", help="the slug named in system keys")
    model.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. https://openrouter.ai/api/v1")
    model.add_argument("--model", default="", help="model name sent to the endpoint (default: the slug)")
    model.add_argument("--api-key-env", default="", help="NAME of the environment variable holding the API key")
    model.add_argument(
        "--max-tokens",
        type=int,
        default=8192,
        help="answer budget; a cut-off reply is retried once at twice it (PROTOCOL §4)",
    )
    model.add_argument("--workers", type=int, default=1, help="parallel requests (default 1: measured faster locally)")
    model.add_argument("--timeout", type=float, default=300.0, help="seconds per request before it is retried")
    model.add_argument(
        "--price-in", type=float, default=None, help="USD per 1M input tokens (required for a paid endpoint)"
    )
    model.add_argument("--price-out", type=float, default=None, help="USD per 1M output tokens")
    model.add_argument(
        "--reasoning-effort", default="minimal", help="sent as reasoning.effort (PROTOCOL §4); 'none' sends none"
    )
    model.add_argument(
        "--confirm-spend",
        action="store_true",
        help="run a paid endpoint after the cost estimate (or CHPIT_CONFIRM_SPEND=1 / CHPIT_CONFIRM=1)",
    )
    execution = run_parser.add_argument_group("execution", "where each run's steps execute (docs/operations.md)")
    execution.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="in_process",
        help="in the run's process (default), a process per step, or on Celery workers",
    )
    execution.add_argument(
        "--celery-broker",
        default=os.environ.get(CELERY_BROKER_ENV) or DEFAULT_BROKER,
        help=f"celery only: the broker (default ${CELERY_BROKER_ENV}, else {DEFAULT_BROKER})",
    )
    execution.add_argument("--celery-queue", default="dagster", help="celery only: the queue the workers consume")
    runs = run_parser.add_argument_group("runs", "which items, and how a run meets its earlier log")
    runs.add_argument(
        "--items",
        default="",
        help="release:REV (pulled with `release pull`) or release-dir:PATH: the published release's core with its "
        "published contexts, results apart from our build's (default: our build's core)",
    )
    runs.add_argument(
        "--sample-per-lang",
        type=int,
        default=0,
        help="the published kind-balanced subsample, N per language (PROTOCOL §6; agentic used 100); 0 = all",
    )
    runs.add_argument(
        "--limit", type=int, default=0, help="only the first N items (by id) per language, for a quick look"
    )
    runs.add_argument(
        "--retry-errors",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ask errored items again (default, PROTOCOL §7)",
    )
    runs.add_argument(
        "--new-run",
        action="store_true",
        help="start over where the log was made with another endpoint, model or settings (kept aside)",
    )
    from chpit_assets.runs.options import add_model_options

    add_model_options(model, runs)
    # A stub: the nightly's own options are read by its parser, built only when it is asked for.
    sub.add_parser(
        "nightly",
        add_help=False,
        help="run tonight's nightly now: build, gate, free systems, report, gated publication (docs/scheduling.md)",
    )
    from chpit_assets.inspect import cli as inspect_cli  # stdlib only until a subcommand runs

    inspect_cli.add_arguments(sub.add_parser("inspect", help="chpit run logs to and from Inspect .eval logs"))
    sub.add_parser("compare", add_help=False, help="two systems on the same items: paired difference, exact McNemar")
    sub.add_parser("release", add_help=False, help="pull, validate and report on a published release (issue 24)")
    args, rest = parser.parse_known_args(argv)
    if args.command == "inspect":
        return inspect_cli.main(parser.parse_args(argv))
    if args.command == "compare":
        from chpit_assets.report.compare import main as compare

        return compare(rest)
    if args.command == "release":
        from chpit_assets.release import cli as release_cli

        return release_cli.main(rest)
    if args.command == "nightly":
        from chpit_assets.orchestration import forkserver

        forkserver.start()  # the runs' fork server imports the code while this process does (issue 27.2)
        from chpit_assets import nightly
        from chpit_assets.instance import default_dagster_home

        nightly_parser = argparse.ArgumentParser(prog=f"{parser.prog} nightly")
        nightly.add_arguments(nightly_parser)
        nightly_args = nightly_parser.parse_args(rest)
        default_dagster_home()
        return _instance_checked(lambda: nightly.main(nightly_args))
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    langs = [lang.strip() for lang in args.langs.split(",") if lang.strip()]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    problem = check_run_args(args, langs, systems)
    if problem:
        return _fail(problem)
    from chpit_assets.instance import default_dagster_home
    from chpit_assets.runs.client import url_secrets

    default_dagster_home()

    base_url = {"base_url": args.base_url}
    if url_secrets(args.base_url):
        # The run config is stored in the Dagster run storage: the credential travels by variable name.
        os.environ[BASE_URL_ENV] = args.base_url
        base_url = {"base_url": "", "base_url_env": BASE_URL_ENV}
    model_config = {
        "slug": args.model_slug,
        **base_url,
        "model": args.model,
        "api_key_env": args.api_key_env,
        "max_tokens": args.max_tokens,
        "retry_max_tokens": 2 * args.max_tokens,
        "workers": args.workers,
        "confirm": args.confirm_spend,
        "timeout_s": args.timeout,
        "price_input_per_mtok": args.price_in,
        "price_output_per_mtok": args.price_out,
        "reasoning_effort": "" if args.reasoning_effort == "none" else args.reasoning_effort,
        "cutoff": args.cutoff,
    }
    runs_config = {
        "sample_per_lang": args.sample_per_lang,
        "limit": args.limit,
        "retry_errors": args.retry_errors,
        "new_run": args.new_run,
        "repeats": args.repeats,
        "items": args.items,
    }
    fedlex_config = {
        "mode": args.source,
        "sparql_url": args.sparql_url,
        "sr_numbers": [n.strip() for n in args.sr_numbers.split(",") if n.strip()],
    }
    if args.items:  # a published release: no build, its own results folder (chpit_assets/release)
        from chpit_assets.release.cli import run_on_release

        return run_on_release(langs, systems, model_config, runs_config)
    executor = executor_config(args.executor, args.celery_broker, args.celery_queue)
    return _instance_checked(lambda: run(langs, systems, model_config, fedlex_config, runs_config, executor))


if __name__ == "__main__":
    sys.exit(main())
