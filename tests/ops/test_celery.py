"""Point 8: the same definitions run their steps on Celery workers through the machine's RabbitMQ,
with the instance on PostgreSQL shared by the launcher and the workers."""

from __future__ import annotations

import json
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from .conftest import Proc, pg_rows, require_package, set_up_instance

PARSE = ["fedlex_catalog", "fedlex_editions", "parsed_articles"]


@pytest.fixture(autouse=True)
def _dagster_celery() -> None:
    # celery and kombu come with dagster-celery; they are imported where used, so that a missing
    # package fails (CI) or skips this module instead of aborting the whole collection.
    require_package("dagster_celery", "dagster-celery==0.29.27")


def _worker_config(directory: Path, amqp_url: str) -> Path:
    """The `dagster_celery_config` module that `dagster_celery.app` reads from PYTHONPATH
    (what `dagster-celery worker start -y` writes)."""
    directory.mkdir()
    (directory / "dagster_celery_config.py").write_text(
        f"broker_url = {amqp_url!r}\n"
        "result_backend = 'rpc://'\n"
        # Ack after the step, so a busy worker holds no second task and RabbitMQ's round robin
        # hands the next step to the idle one: both workers take part, deterministically.
        "task_acks_late = True\n"
    )
    return directory


def _pid(event_json: str) -> int:
    """The process that emitted a stored event (the column holds a serialised EventLogEntry)."""
    entry = dg.deserialize_value(event_json, dg.EventLogEntry)
    assert entry.dagster_event is not None
    return entry.dagster_event.pid


def _wait_until_ready(amqp_url: str, names: list[str], workers: list[Proc], timeout: float = 90) -> None:
    from celery import Celery

    app = Celery(broker=amqp_url)
    deadline = time.monotonic() + timeout
    while True:
        answered = {name.split("@")[0] for reply in app.control.ping(timeout=1.0) for name in reply}
        if set(names) <= answered:
            return
        for worker in workers:
            assert worker.popen.poll() is None, f"a Celery worker died:\n{worker.output()[-4000:]}"
        assert time.monotonic() < deadline, f"workers {names} not ready after {timeout}s"


@pytest.fixture
def queue(amqp_url: str) -> Iterator[str]:
    """A queue of this test's own, so nothing else on the broker takes its steps or feeds it stale
    ones; deleted afterwards (requested before `spawn`, so the workers are gone by then)."""
    from kombu import Connection

    name = f"chpit-test-{uuid.uuid4().hex[:8]}"
    yield name
    with Connection(amqp_url) as connection:
        connection.default_channel.queue_delete(name)


def start_workers(env: dict[str, str], amqp_url: str, queue: str, tmp_path: Path, spawn, count: int = 2) -> list[Proc]:
    """`count` solo-pool Celery workers on `queue`, ready when this returns."""
    names = [f"w{n}-{queue}" for n in range(1, count + 1)]
    worker_env = dict(env, PYTHONPATH=str(_worker_config(tmp_path / "celery", amqp_url)))
    workers = [
        spawn(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "dagster_celery.app",
                "worker",
                "-Q",
                queue,
                "-n",
                f"{name}@%h",
                "--pool",
                "solo",
                "--prefetch-multiplier",
                "1",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "INFO",
            ],
            worker_env,
            name,
            stop_signal=signal.SIGQUIT,
        )  # cold shutdown: idle by then, and a warm one takes ~10 s
        for name in names
    ]
    _wait_until_ready(amqp_url, names, workers)
    return workers


def test_the_parse_runs_on_two_celery_workers(base_env, postgres_home, pg_url, amqp_url, queue, tmp_path, spawn):
    env = dict(base_env, CHPIT_PG_URL=pg_url)
    workers = start_workers(env, amqp_url, queue, tmp_path, spawn)
    set_up_instance(spawn, env)
    run_config = {
        "execution": {
            "config": {
                "celery": {"broker": amqp_url, "backend": "rpc://", "config_source": {"task_default_queue": queue}}
            }
        }
    }
    launcher = spawn(
        [
            sys.executable,
            "-m",
            "dagster",
            "asset",
            "materialize",
            "-m",
            "chpit_assets.definitions",
            "--select",
            ",".join(PARSE),
            "--partition",
            "de",
            "--config-json",
            json.dumps(run_config),
        ],
        env,
        "launcher",
    )
    launcher.wait_ok(timeout=240)

    # The launcher's instance was PostgreSQL: the run and the workers' events are there.
    [(run_id, status)] = pg_rows(pg_url, "SELECT run_id, status FROM runs")
    assert status == "SUCCESS"
    starts = pg_rows(
        pg_url,
        "SELECT step_key, event FROM event_logs WHERE run_id = %s AND dagster_event_type = %s",
        (run_id, dg.DagsterEventType.STEP_START.value),
    )
    step_pids = {step: _pid(event) for step, event in starts}
    assert sorted(step_pids) == sorted(PARSE)
    [(run_start,)] = pg_rows(
        pg_url,
        "SELECT event FROM event_logs WHERE run_id = %s AND dagster_event_type = %s",
        (run_id, dg.DagsterEventType.RUN_START.value),
    )
    # Solo pool: a worker runs its tasks in its own process, so each step's pid is a worker's pid.
    assert _pid(run_start) not in step_pids.values()
    assert set(step_pids.values()) == {w.popen.pid for w in workers}
    materialised = pg_rows(
        pg_url,
        "SELECT asset_key, partition FROM event_logs WHERE run_id = %s"
        " AND dagster_event_type = 'ASSET_MATERIALIZATION' ORDER BY asset_key",
        (run_id,),
    )
    assert materialised == [(json.dumps([key]), "de") for key in PARSE]


SYSTEMS = ("oracle", "recite", "cite/current", "cite/pit")


def test_one_benchmark_backfill_runs_its_system_partitions_on_both_workers(
    base_env, postgres_home, pg_url, amqp_url, queue, tmp_path, spawn
):
    """Issue 22.4: `run --executor celery` sends the steps of every run of the one backfill to the
    workers; the (system, lang) partitions of that backfill are taken by both of them."""
    env = dict(base_env, CHPIT_PG_URL=pg_url)
    workers = start_workers(env, amqp_url, queue, tmp_path, spawn)
    cli = spawn(
        [sys.executable, "-m", "chpit_assets", "run", "--langs", "de", "--systems", ",".join(SYSTEMS)]
        + ["--executor", "celery", "--celery-broker", amqp_url, "--celery-queue", queue],
        env,
        "cli",
    )
    cli.wait_ok(timeout=600)
    assert "benchmark: ok (backfill" in cli.output()

    [(backfill_id,)] = pg_rows(pg_url, "SELECT key FROM bulk_actions")
    runs = pg_rows(
        pg_url,
        "SELECT r.run_id, r.status FROM runs r JOIN run_tags t ON t.run_id = r.run_id"
        " WHERE t.key = 'dagster/backfill' AND t.value = %s",
        (backfill_id,),
    )
    assert runs and {status for _, status in runs} == {"SUCCESS"}
    steps = pg_rows(
        pg_url,
        "SELECT run_id, step_key, event FROM event_logs"
        " WHERE step_key IN ('results', 'scored_results') AND dagster_event_type = %s",
        (dg.DagsterEventType.STEP_START.value,),
    )
    # One run per (system, de) partition, all of this backfill, each with its two steps.
    assert len({run_id for run_id, _, _ in steps}) == len(SYSTEMS) and len(steps) == 2 * len(SYSTEMS)
    assert {run_id for run_id, _, _ in steps} <= {run_id for run_id, _ in runs}
    # Every step ran on a worker, and the partitions' steps were shared between the two.
    assert {_pid(event) for _, _, event in steps} == {w.popen.pid for w in workers}
