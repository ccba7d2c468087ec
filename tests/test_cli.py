"""`python -m chpit_assets run`, the command behind `make run`: the whole chain from live Fedlex (a
loopback server serving the real sample) gives the same benchmark as the shipped sample read offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chpit_assets.cli import main
from chpit_assets.defs.partitions import BENCH_LANGS
from chpit_assets.fedlex.catalog import load_sample_catalog
from tests.fedlex.conftest import SAMPLE, FakeFedlex, sample_graph
from tests.runs.conftest import ScriptedServer, completion

ROOT = Path(__file__).resolve().parents[1]


def run_cli(tmp: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    (tmp / "home").mkdir(parents=True, exist_ok=True)
    (tmp / "home" / "dagster.yaml").write_bytes((ROOT / "dagster.yaml").read_bytes())
    env = dict(os.environ, DAGSTER_HOME=str(tmp / "home"), CHPIT_DATA_DIR=str(tmp / "data"), **env_extra)
    env.pop("CHPIT_PG_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "chpit_assets", "run", "--langs", "de", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_live_fedlex_and_the_offline_sample_build_the_same_benchmark(tmp_path):
    fake = FakeFedlex()
    try:
        fake.graph, files = sample_graph(load_sample_catalog(SAMPLE), fake.base_url)
        fake.files = {path: src.read_bytes() for path, src in files.items()}
        live = run_cli(tmp_path / "live", "--source", "live", "--sparql-url", fake.endpoint)
    finally:
        fake.close()
    assert live.returncode == 0, live.stdout + live.stderr
    german = [p for p in files if "/de/xml/" in p]
    assert german and all(fake.hits[p] == 1 for p in german)  # each German file once, over HTTP
    assert not any(fake.hits[p] for p in files if p not in german)
    offline = run_cli(tmp_path / "offline")
    assert offline.returncode == 0, offline.stdout + offline.stderr

    for name in ("bench-de.jsonl", "core-de.jsonl", "build-report.json"):
        assert (tmp_path / "live/data/build" / name).read_bytes() == (
            tmp_path / "offline/data/build" / name
        ).read_bytes()
    items = [json.loads(line) for line in (tmp_path / "offline/data/build/bench-de.jsonl").read_text().splitlines()]
    core = (tmp_path / "offline/data/build/core-de.jsonl").read_text().splitlines()
    assert items and {"235.1", "170.512"} <= {i["sr_number"] for i in items}
    report = (tmp_path / "offline/data/report/report.md").read_text()
    assert f"| oracle | {len(core)} | 100.0 [" in report  # the share, then its 95% interval
    assert (tmp_path / "offline/data/publish/data/de/core-00000-of-00001.parquet").is_file()
    assert "hf_dataset: ok" in offline.stdout and "local only" in offline.stdout + offline.stderr


BAD_ARGS = [
    (["--systems", "gpt4"], "unknown system key 'gpt4'"),
    (["--systems", "oracle,gpt/summarise"], "unknown system key 'gpt/summarise'"),
    (["--systems", "other/pit"], "names model 'other'"),
    (["--langs", "de,xx"], "unknown language(s) ['xx']"),
    (["--systems", "m/closed", "--model-slug", "m", "--base-url", "ftp://host/v1"], "not an http(s) URL"),
    (
        ["--systems", "m/closed", "--model-slug", "m", "--base-url", "https://router.example/api/v1"],
        "no price for model 'm'",
    ),
    (["--base-url", "https://router.example/v1", "--price-in", "1"], "go together"),
    (["--base-url", "https://router.example/v1", "--price-in", "-1", "--price-out", "1"], ">= 0"),
    (["--api-key-env", "OPENROUTER_KEY"], "need --base-url"),
    (["--base-url", "http://127.0.0.1:1/v1", "--api-key-env", "sk-or-v1-abc"], "NAME of an environment variable"),
    (["--sample-per-lang", "-1"], "--sample-per-lang must be >= 0"),
    (["--limit", "-3"], "--limit must be >= 0"),
    (["--workers", "0"], "--workers must be >= 1"),
    (["--timeout", "0"], "--timeout must be > 0"),
    (["--systems", "smollm2-135m/pit", "--repeats", "0"], "--repeats must be >= 1"),
    (["--systems", "oracle,recite", "--repeats", "3"], "none of oracle, recite asks a model"),
    (["--systems", "smollm2-135m/pit", "--cutoff", "2025-13-01"], "--cutoff '2025-13-01' is not a date"),
]


def test_repeats_and_cutoff_reach_the_run_config(monkeypatch, tmp_path):
    """Issue 25: `--repeats` is the results op's `repeats`, `--cutoff` the model endpoint's `cutoff`."""
    from chpit_assets import cli

    seen = {}
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setattr(
        cli, "run", lambda langs, systems, model, fedlex, runs, executor: seen.update(model=model, runs=runs) or 0
    )
    assert main(["run", "--systems", "smollm2-135m/pit", "--repeats", "3", "--cutoff", "2025-06-30"]) == 0
    assert seen["runs"]["repeats"] == 3 and seen["model"]["cutoff"] == "2025-06-30"


def test_compare_is_a_subcommand_with_its_own_arguments(tmp_path, capsys):
    assert main(["compare", "oracle", "recite", "--data-dir", str(tmp_path)]) == 2
    assert "no scored results for system 'oracle'" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", BAD_ARGS)
def test_bad_arguments_fail_before_anything_runs_with_one_line_and_exit_2(args, message, capsys):
    """Issue 14 item 3, in-process: nothing is built (no DAGSTER_HOME or data dir is needed)."""
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_mistyped_system_key_fails_without_loading_dagster(tmp_path):
    """Issue 14 acceptance (`--systems gpt4` < 5 s): the check runs before Dagster is even imported,
    so it costs the interpreter's start-up only; asserted by import trace, not by the clock."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chpit_assets", "run", "--systems", "gpt4"],
        cwd=ROOT,
        env=dict(os.environ, CHPIT_DATA_DIR=str(tmp_path / "data")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert not any(
        line.split("|")[-1].strip().startswith("dagster")
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    )
    assert not (tmp_path / "data").exists()


def test_the_default_languages_are_the_published_ones(capsys):
    assert main(["run", "--langs", "", "--systems", "oracle"]) == 2  # empty after stripping: refused
    import argparse

    from chpit_assets import cli

    assert (
        "de,fr,it" == ",".join(BENCH_LANGS)
        and cli.check_run_args(
            argparse.Namespace(
                model_slug="smollm2-135m",
                base_url="",
                api_key_env="",
                price_in=None,
                price_out=None,
                model="",
                sample_per_lang=0,
                limit=0,
                workers=1,
                max_tokens=8192,
                timeout=1.0,
                repeats=1,
                cutoff="",
                source="sample",
                sr_numbers="",
                items="",
            ),
            list(BENCH_LANGS),
            ["oracle"],
        )
        == ""
    )


SECRETS = {"password": "pw-PLANTED-7c1e", "query": "q-PLANTED-93ab", "api_key": "sk-PLANTED-55d0"}


def test_a_failing_endpoint_exits_non_zero_a_recovered_one_completes_and_no_secret_is_stored(tmp_path):
    """Issue 14 acceptance and issue 15 item 5: against a loopback endpoint that refuses every request
    the CLI exits 3 naming the error; after it recovers a plain re-run asks exactly the errored items
    and exits 0. A password and a query key in --base-url and an API key in the environment are
    planted; none of them appears in any file the runs wrote (data/, the Dagster home) or printed."""
    state = {"fail": True}
    server = ScriptedServer(
        lambda body: (
            (400, {"error": "model overloaded today"}) if state["fail"] else (200, completion("1 Irgendein Text."))
        )
    )
    try:
        url = server.base_url.replace("http://", f"http://bob:{SECRETS['password']}@") + f"?key={SECRETS['query']}"
        args = [
            "--systems",
            "scripted/closed",
            "--model-slug",
            "scripted",
            "--base-url",
            url,
            "--limit",
            "3",
            "--api-key-env",
            "CHPIT_PLANTED_KEY",
        ]
        failed = run_cli(tmp_path, *args, CHPIT_PLANTED_KEY=SECRETS["api_key"])
        assert failed.returncode == 3, failed.stdout + failed.stderr
        assert "all 3 items errored; commonest error: ModelCallError" in failed.stderr
        assert "HTTP 400" in failed.stderr and "Traceback" not in failed.stderr
        assert "scripted/closed [de]: 0 answered, 3 errored" in failed.stdout
        asked_first = len(server.hits)
        state["fail"] = False
        recovered = run_cli(tmp_path, *args, CHPIT_PLANTED_KEY=SECRETS["api_key"])
        assert recovered.returncode == 0, recovered.stdout + recovered.stderr
        assert "scripted/closed [de]: 3 answered, 0 errored" in recovered.stdout
        assert len(server.hits) - asked_first == 3 * 1  # each errored item once more, nothing else
    finally:
        server.close()
    outputs = [failed.stdout, failed.stderr, recovered.stdout, recovered.stderr]
    blobs = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert any(b"scripted/closed" in b for b in blobs)  # the grep does see the runs' records
    for secret in SECRETS.values():
        assert not any(secret in text for text in outputs), secret
        assert not any(secret.encode() in blob for blob in blobs), secret


def _materialised(instance, system: str, lang: str, answered: int, errored: int, error: str = "") -> None:
    import dagster as dg

    instance.report_runless_asset_event(
        dg.AssetMaterialization(
            asset_key="results",
            partition=str(dg.MultiPartitionKey({"system": system, "lang": lang})),
            metadata={
                "log_items": answered + errored,
                "log_answered": answered,
                "log_errored": errored,
                "log_not_asked": 0,
                "skipped_already_answered": 0,
                "commonest_error": error,
            },
        )
    )


@pytest.mark.parametrize("errored, code", [((0, 0), 0), ((1, 0), 1), ((4, 3), 3)])
def test_the_exit_code_says_whether_some_or_all_items_errored(errored, code, capsys):
    """Issue 14 item 4: 0 when nothing errored, 1 when some item did, 3 when every one did."""
    import dagster as dg

    from chpit_assets import cli

    with dg.instance_for_test() as instance:
        since = 0.0
        _materialised(
            instance, "m/closed", "de", 4 - errored[0], errored[0], "ModelCallError: HTTP 500" * bool(errored[0])
        )
        _materialised(
            instance, "m/closed", "fr", 3 - errored[1], errored[1], "ModelCallError: ReadTimeout" * bool(errored[1])
        )
        assert cli._run_summary(instance, ["m/closed"], ["de", "fr"], since) == code
    out, err = capsys.readouterr()
    assert f"m/closed [de]: {4 - errored[0]} answered, {errored[0]} errored" in out
    if code:
        assert "commonest error: ModelCallError: HTTP 500" in err


def test_a_bad_new_file_for_a_parsed_edition_keeps_its_items_fails_and_names_the_file(tmp_path):
    """Issue 15 acceptance: one already-parsed edition's file replaced by Fedlex's HTML error page. The
    edition keeps its articles and items (its last good parse), the command exits non-zero and says
    which file."""
    import hashlib
    import shutil

    sample = tmp_path / "sample"
    shutil.copytree(SAMPLE, sample)
    env = {"CHPIT_SAMPLE_DIR": str(sample)}
    first = run_cli(tmp_path, "--systems", "oracle", **env)
    assert first.returncode == 0, first.stdout + first.stderr
    bench = (tmp_path / "data/build/bench-de.jsonl").read_bytes()
    assert b'"e_id": "art_24"' in bench  # DSG Art. 24, from the 2023-09-01 edition replaced below
    page = b"<!DOCTYPE html><html><body>Wartungsarbeiten</body></html>"
    (sample / "cc-2022-491" / "20230901-de.xml").write_bytes(page)
    # The catalog announces the new bytes (as the live catalog would a re-issued file), so it is fetched.
    catalog = json.loads((sample / "catalog.json").read_text())
    for act in catalog["acts"]:
        for edition in act["editions"]:
            if edition["file"] == "cc-2022-491/20230901-de.xml":
                edition["sha256"] = hashlib.sha256(page).hexdigest()
    (sample / "catalog.json").write_text(json.dumps(catalog))
    second = run_cli(tmp_path, "--systems", "oracle", **env)
    assert second.returncode != 0
    assert "cc-2022-491/20230901-de.xml" in second.stderr, second.stderr
    assert (tmp_path / "data/build/bench-de.jsonl").read_bytes() == bench


def test_a_paid_endpoint_without_confirmation_prints_the_estimate_and_exits_2_before_any_call(tmp_path):
    """PROTOCOL §7 through the whole backfill: built and gated, then the paid system refused before any
    call (SpendNotConfirmedError, read from the event log), with the estimate printed and exit 2."""
    done = run_cli(
        tmp_path,
        "--systems",
        "oracle,gpt/closed",
        "--model-slug",
        "gpt",
        "--base-url",
        "https://models.example.invalid/v1",
        "--price-in",
        "1.25",
        "--price-out",
        "10",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    [estimate] = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert set(estimate) == {"gpt", "total_usd"} and set(estimate["gpt"]) == {
        "items",
        "input_tokens",
        "output_tokens",
        "usd",
    }
    assert estimate["gpt"]["items"] == 9 and estimate["total_usd"] == estimate["gpt"]["usd"] > 0
    assert "not run: gpt/closed on https://models.example.invalid/v1" in done.stderr
    assert "build [de]: ok" in done.stdout and "gpt/closed [de]: FAILED" in done.stdout
    assert "report, publish_gate" not in done.stdout  # nothing after the refusal
    assert "Traceback" not in done.stderr


def test_sr_numbers_with_the_sample_source_is_refused_before_anything_runs(capsys):
    """Issue 23 item 8: the sample has its own acts; a restriction to SR numbers was silently ignored."""
    assert main(["run", "--sr-numbers", "235.1", "--systems", "oracle"]) == 2
    assert "--sr-numbers selects acts of live Fedlex: it needs --source live" in capsys.readouterr().err


@pytest.mark.slow
def test_a_cached_edition_edited_on_disk_is_never_published(tmp_path):
    """Issue 23 item 1, end to end: a cached file edited on disk, then a re-parse (the store deleted).
    Before, the edited word reached the published gold text with exit 0."""
    import hashlib

    first = run_cli(tmp_path, "--systems", "oracle,recite")
    assert first.returncode == 0, first.stdout + first.stderr
    published = {p: p.read_bytes() for p in sorted((tmp_path / "data/publish").rglob("*")) if p.is_file()}
    april = (SAMPLE / "cc-2022-491" / "20250401-de.xml").read_bytes()
    cached = tmp_path / "data/cache/sha256" / hashlib.sha256(april).hexdigest()[:2]
    cached = cached / f"{hashlib.sha256(april).hexdigest()}.xml"
    word = "Der EDÖB kann die Meldung".encode()
    assert april.count(word) == 1
    cached.write_bytes(april.replace(word, "Der EDÖB kann die MELDUNG".encode()))
    for store_file in (tmp_path / "data").glob("chpit.duckdb*"):
        store_file.unlink()
    second = run_cli(tmp_path, "--systems", "oracle,recite")
    assert second.returncode != 0, second.stdout + second.stderr
    assert "editions_all_parsed" in second.stderr and f"cached file {cached}" in second.stderr  # the cause, named
    assert {p: p.read_bytes() for p in published} == published  # the publication stayed as it was
    assert all(b"MELDUNG" not in p.read_bytes() for p in (tmp_path / "data/build").glob("*.jsonl"))
    assert not cached.exists() and cached.with_name(cached.name + ".corrupt").exists()
    # The file was moved aside, so the next run copies the sample file again: the same publication.
    third = run_cli(tmp_path, "--systems", "oracle,recite")
    assert third.returncode == 0, third.stdout + third.stderr
    assert {p: p.read_bytes() for p in published} == published


@pytest.mark.slow
def test_a_bounded_run_keeps_to_its_own_folder_and_never_reaches_the_full_results(tmp_path):
    """Issue 23.6: `--limit 2` once cut data/results/oracle/de.jsonl from 9 lines to 1, and the next
    `make run` published the one-item row. Now a bounded run writes data/runs/<name>/ only."""
    full = run_cli(tmp_path, "--systems", "oracle,recite")
    assert full.returncode == 0, full.stdout + full.stderr
    assert_one_backfill_per_invocation(tmp_path / "home", 1)
    data = tmp_path / "data"
    before = {p: p.read_bytes() for p in sorted((data / "results").rglob("*")) if p.is_file()}
    report = (data / "report" / "report.md").read_bytes()
    published = {p: p.read_bytes() for p in sorted((data / "publish").rglob("*")) if p.is_file()}

    bounded = run_cli(tmp_path, "--systems", "oracle,recite", "--limit", "2")
    assert bounded.returncode == 0, bounded.stdout + bounded.stderr
    own = data / "runs" / "limit-2"
    assert f"its results and report are in {own}" in bounded.stdout
    assert len((own / "results" / "oracle" / "de.jsonl").read_text().splitlines()) == 2
    assert (own / "report" / "report.md").exists()
    assert {p: p.read_bytes() for p in before} == before  # the full run's results untouched
    assert (data / "report" / "report.md").read_bytes() == report
    assert {p: p.read_bytes() for p in published} == published
    assert len((data / "results" / "oracle" / "de.jsonl").read_text().splitlines()) == 9
    assert_one_backfill_per_invocation(tmp_path / "home", 2)


def assert_one_backfill_per_invocation(home: Path, invocations: int) -> None:
    """Issue 22 acceptance: each command is one backfill; every run belongs to one, was launched
    through the code location (a job origin: the UI lists it under its job), tagged `cli`."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        backfills = instance.get_backfills()
        assert len(backfills) == invocations and all(b.tags["chpit/trigger"] == "cli" for b in backfills)
        runs = instance.get_runs()
        assert {r.tags.get("dagster/backfill") for r in runs} == {b.backfill_id for b in backfills}
        assert all(r.remote_job_origin is not None for r in runs)
        assert {r.remote_job_origin.location_name for r in runs if r.remote_job_origin} == {"chpit"}
        assert all(r.tags.get("chpit/trigger") == "cli" for r in runs)
        # The driver keeps a worker forked ahead of each launch (issue 27.2); none had to be forked at it.
        assert {r.tags.get("chpit/worker-forked") for r in runs} == {"ahead"}
        # Each run worker captured its stdout and stderr to the end, where the UI reads them (issue 27.2).
        logs = instance.compute_log_manager
        for run in runs:
            captures = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.LOGS_CAPTURED)
            assert len(captures) == 1, run.run_id
            file_key = captures[0].get_dagster_event().event_specific_data.file_key
            assert logs.is_capture_complete(logs.build_log_key_for_run(run.run_id, file_key)), run.run_id


def test_the_frozen_record_and_data_resolve_against_the_project_from_any_folder(tmp_path, monkeypatch):
    """Issue 23.3: `frozen/` once resolved against the shell's folder, so a run from elsewhere ignored
    the record and changed a published item."""
    from chpit_assets.defs.resources import FROZEN_DIR_ENV, PROJECT_ROOT, ChpitStore

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(FROZEN_DIR_ENV)
    assert ChpitStore().frozen_path == PROJECT_ROOT / "frozen" == ChpitStore(frozen_dir="frozen").frozen_path
    assert (PROJECT_ROOT / "frozen").is_dir()  # committed, as the README says
    monkeypatch.setenv(FROZEN_DIR_ENV, str(tmp_path / "record"))
    assert ChpitStore().frozen_path == tmp_path / "record"


@pytest.mark.slow
def test_the_cli_from_another_folder_builds_and_publishes_the_same_bytes(tmp_path):
    """Issue 23.3: the same run from the project and from an unrelated folder, byte for byte."""
    here = run_cli(tmp_path / "here", "--systems", "oracle,recite")
    elsewhere_dir = tmp_path / "elsewhere"
    elsewhere_dir.mkdir()
    env = dict(
        os.environ, DAGSTER_HOME=str(tmp_path / "there" / "home"), CHPIT_DATA_DIR=str(tmp_path / "there" / "data")
    )
    (tmp_path / "there" / "home").mkdir(parents=True)
    (tmp_path / "there" / "home" / "dagster.yaml").write_bytes((ROOT / "dagster.yaml").read_bytes())
    env.pop("CHPIT_PG_URL", None)
    there = subprocess.run(
        [sys.executable, "-m", "chpit_assets", "run", "--langs", "de", "--systems", "oracle,recite"],
        cwd=elsewhere_dir,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert here.returncode == 0 and there.returncode == 0, there.stdout + there.stderr
    for folder in ("build", "publish"):
        mine = {
            p.relative_to(tmp_path / "here" / "data"): p.read_bytes()
            for p in (tmp_path / "here" / "data" / folder).rglob("*")
            if p.is_file()
        }
        theirs = {
            p.relative_to(tmp_path / "there" / "data"): p.read_bytes()
            for p in (tmp_path / "there" / "data" / folder).rglob("*")
            if p.is_file()
        }
        assert mine and mine == theirs, folder
    assert not list(elsewhere_dir.iterdir())  # nothing written where the shell was
