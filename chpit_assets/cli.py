"""`python -m chpit_assets run`: the main job on the embedded default, as `make run` calls it.

Runs each language partition through Dagster (so every materialisation, its
metadata and data versions land in the instance under $DAGSTER_HOME, visible
later in `dagster dev`), then prints where the outputs are.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import dagster as dg

from chpit_assets import nightly
from chpit_assets.defs.partitions import BENCH_LANGS
from chpit_assets.fedlex.catalog import LANGS
from chpit_assets.instance import default_dagster_home, prepare_instance

DEFAULT_RUN_SYSTEMS = ("oracle", "recite")
_QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def run(langs: list[str], systems: list[str], model_config: dict, fedlex_config: dict) -> int:
    from chpit_assets.definitions import defs
    from chpit_assets.defs.runs.pipeline import run_benchmark

    # Output(data_version=...) is beta in Dagster 1.13 and says so on every run; the flag is deliberate.
    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    instance = dg.DagsterInstance.get()
    prepare_instance(instance)
    build_config = {**_QUIET, "resources": {"fedlex": {"config": fedlex_config}}}
    steps = [("build", lang) for lang in langs] + [("build_report_job", None)]
    for job_name, partition in steps:
        result = defs.resolve_job_def(job_name).execute_in_process(
            instance=instance, partition_key=partition, raise_on_error=False,
            run_config=build_config if partition else _QUIET,
        )
        label = f"{job_name} [{partition}]" if partition else job_name
        print(f"{label}: {'ok' if result.success else 'FAILED'} (run {result.run_id})", flush=True)
        if not result.success:
            return 1
    bench_langs = [lang for lang in langs if lang in BENCH_LANGS]
    run_config = {**_QUIET, "resources": {"model": {"config": model_config}}}
    if not run_benchmark(defs, instance, systems, bench_langs, run_config=run_config):
        return 1
    # Publication is gated by blocking checks; a failed gate leaves the previous data/publish/ intact.
    publish = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=instance,
        asset_selection=[dg.AssetKey("publish_gate"), dg.AssetKey("hf_dataset")],
        raise_on_error=False,
        run_config=_QUIET,
    )
    print(f"hf_dataset: {'ok' if publish.success else 'FAILED (gate or upload, see the run)'} (run {publish.run_id})")
    if not publish.success:
        return 1
    print("outputs: data/chpit.duckdb, data/build/, data/results/, data/report/report.{md,json,html}, data/publish/")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chpit_assets", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="materialise the pipeline for the given languages")
    run_parser.add_argument(
        "--langs",
        default=",".join(BENCH_LANGS),
        help=f"comma-separated, of {','.join(LANGS)} (default: the languages CH-PiT publishes)",
    )
    run_parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_RUN_SYSTEMS),
        help="comma-separated system keys: oracle, recite, <model-slug>/{closed,current,pit,agentic}",
    )
    fedlex = run_parser.add_argument_group("Fedlex", "where the catalog and the XML editions come from")
    fedlex.add_argument("--source", choices=("sample", "live"), default="sample",
                        help="the shipped sample (offline, default) or live Fedlex (SPARQL + filestore)")
    fedlex.add_argument("--sr-numbers", default="", help="live only: comma-separated SR numbers (default: every act)")
    fedlex.add_argument("--sparql-url", default="https://fedlex.data.admin.ch/sparqlendpoint")
    model = run_parser.add_argument_group(
        "model endpoint", "for <model-slug>/<mode> systems; default: the local SmolLM2 server, started per run"
    )
    model.add_argument("--model-slug", default="smollm2-135m", help="the slug named in system keys")
    model.add_argument("--base-url", default="", help="OpenAI-compatible endpoint, e.g. https://openrouter.ai/api/v1")
    model.add_argument("--model", default="", help="model name sent to the endpoint (default: the slug)")
    model.add_argument("--api-key-env", default="", help="NAME of the environment variable holding the API key")
    model.add_argument("--max-tokens", type=int, default=8192, help="answer budget; a cut-off reply is retried once at twice it (R3)")
    model.add_argument("--workers", type=int, default=2)
    model.add_argument("--confirm-spend", action="store_true", help="run a paid endpoint after the cost estimate")
    nightly.add_arguments(sub.add_parser("nightly", help="run tonight's nightly now: build, gate, free systems, "
                                                          "report, gated publication (docs/scheduling.md)"))
    args = parser.parse_args(argv)
    default_dagster_home()
    if args.command == "nightly":
        return nightly.main(args)
    langs = [lang.strip() for lang in args.langs.split(",") if lang.strip()]
    unknown = sorted(set(langs) - set(LANGS))
    if unknown:
        parser.error(f"unknown language(s) {unknown}; known: {list(LANGS)}")
    model_config = {
        "slug": args.model_slug, "base_url": args.base_url, "model": args.model, "api_key_env": args.api_key_env,
        "max_tokens": args.max_tokens, "retry_max_tokens": 2 * args.max_tokens, "workers": args.workers,
        "confirm": args.confirm_spend,
    }
    fedlex_config = {
        "mode": args.source, "sparql_url": args.sparql_url,
        "sr_numbers": [n.strip() for n in args.sr_numbers.split(",") if n.strip()],
    }
    return run(langs, [s.strip() for s in args.systems.split(",") if s.strip()], model_config, fedlex_config)


if __name__ == "__main__":
    sys.exit(main())
