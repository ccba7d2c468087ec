"""Dagster instance storage chosen from the environment: PostgreSQL when configured, else the embedded SQLite.

`dagster.yaml` is static YAML, so it cannot say "Postgres if a URL is set". It names
`ChpitInstanceStorage` as custom storage instead; Dagster calls `from_config_value` every
time an instance is loaded from that file or rehydrated from an `InstanceRef` (a run
worker, a Celery worker, a step subprocess). The reference carries the unresolved config
(the env var's name, `{env: DAGSTER_HOME}`), so each process decides from its own
environment: workers must be started with the same `CHPIT_PG_URL` and `DAGSTER_HOME`.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClass, ConfigurableClassData

from chpit_assets.files import write_atomic

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HOME = PROJECT_ROOT / "data" / "dagster_home"
WRITER_POOL = "duckdb_writer"
BACKEND_FILE = "chpit-instance-backend"
"""In $DAGSTER_HOME: which storage the instance was first opened on (`sqlite` or `postgresql`)."""

RUN_HOST_TAG = "chpit/host"
RUN_PID_TAG = "chpit/pid"

PG_URL_ENV = "CHPIT_PG_URL"
"""Default name of the variable holding a SQLAlchemy/libpq URL, e.g. postgresql://user:pw@host:5432/dagster."""


class InstanceStorageError(RuntimeError):
    """The configured PostgreSQL instance storage could not be opened, or this process would open
    another storage than the one the instance was set up on."""


def default_dagster_home(environ: MutableMapping[str, str] = os.environ) -> None:
    """Issue 14.1: with DAGSTER_HOME unset, use the project's data/dagster_home (given the shipped
    dagster.yaml if it has none), as `make` does, and say so once on stderr."""
    if environ.get("DAGSTER_HOME"):
        return
    DEFAULT_HOME.mkdir(parents=True, exist_ok=True)
    if not (DEFAULT_HOME / "dagster.yaml").exists():
        shutil.copy(PROJECT_ROOT / "dagster.yaml", DEFAULT_HOME / "dagster.yaml")
    environ["DAGSTER_HOME"] = str(DEFAULT_HOME)
    print(f"DAGSTER_HOME is not set; using {DEFAULT_HOME}", file=sys.stderr, flush=True)


def prepare_instance(instance: dg.DagsterInstance) -> int | None:
    """Issue 18.5: record the writer pool's limit (dagster.yaml's `default_limit`) on the instance now.

    On a fresh instance Dagster's run queue records a pool's default limit during its first pass and
    applies it only from the next, so a first batch of queued runs could start together. Recording it
    at set-up (make run/dev/daemon, the CLI) closes that window; an existing limit is left as set.
    The published languages are registered as `lang` partitions here too, and runs whose process
    was killed are marked failed (issue 14.6, `fail_dead_runs`).
    Returns the pool's limit."""
    from chpit_assets.defs.partitions import BENCH_LANGS, register_langs

    register_langs(instance, BENCH_LANGS)  # the published languages are partitions from the start
    fail_dead_runs(instance)
    instance.event_log_storage.initialize_concurrency_limit_to_default(WRITER_POOL)
    return instance.event_log_storage.get_concurrency_info(WRITER_POOL).slot_count


def pool_granularity(instance: dg.DagsterInstance) -> str:
    """`run` or `op`: how the instance hands out pool slots (dagster.yaml `concurrency: pools:
    granularity:`; Dagster's default, unset, means `op`)."""
    granularity = instance.get_concurrency_config().pool_config.pool_granularity
    return granularity.value if granularity is not None else "op"


def process_tags() -> dict[str, str]:
    """Tags naming the process a run executes in, for the runs this code starts in its own process
    (the CLI's, and the stage runs of the `rebuild` op): what `fail_dead_runs` checks."""
    return {RUN_HOST_TAG: socket.gethostname(), RUN_PID_TAG: str(os.getpid())}


def fail_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark failed every started run of this host whose process is gone (kill -9, OOM, a lost shell).

    Dagster's own watch covers runs it launched: the code server fails a run whose worker died, and
    `run_monitoring` (dagster.yaml) fails runs stuck starting. A run executed inside a process of
    ours (`make run`, `chpit nightly`, a nightly's stage runs) has no worker to watch, so without
    this it would show STARTED forever. Returns the ids marked."""
    host = socket.gethostname()
    dead = []
    for run in instance.get_runs(
        dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING], tags={RUN_HOST_TAG: host})
    ):
        pid = int(run.tags.get(RUN_PID_TAG) or 0)
        if pid and not _alive(pid):
            instance.report_run_failed(
                run,
                f"the process that ran it (pid {pid} on {host}) is gone: killed or "
                "crashed without ending the run; marked failed at the next set-up",
            )
            dead.append(run.run_id)
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process holds the pid: alive, not ours to judge
    return True


def _check_backend(dagster_home: str, backend: str, env_name: str) -> Path | None:
    """Issue 18.4: an instance is set up on one storage; a process whose environment would open the
    other (CHPIT_PG_URL missing or added) would show an empty instance, so it is refused instead.
    Returns the marker to record once the storage opened, None when it is recorded already."""
    marker = Path(dagster_home) / BACKEND_FILE
    if not marker.exists():
        return marker
    recorded = marker.read_text().strip()
    if recorded != backend:
        how = f"set ${env_name}" if recorded == "postgresql" else f"unset ${env_name}"
        raise InstanceStorageError(
            f"the instance in {dagster_home} was set up on {recorded}, but this process would open {backend} "
            f"(${env_name} is {'set' if backend == 'postgresql' else 'unset'}): {how}, or delete {marker} to "
            "switch this instance's storage deliberately (docs/operations.md)"
        )
    return None


class ChpitInstanceStorage(DagsterStorage, ConfigurableClass):
    """Factory for the instance's unified storage (runs, events, schedules).

    Subclasses DagsterStorage only because Dagster checks the configured class against it
    before calling `from_config_value`; it is never instantiated itself. `from_config_value`
    returns Dagster's own `DagsterPostgresStorage` or `DagsterSqliteStorage`, each carrying
    this class's `inst_data`, so a reference taken from the instance points back here and is
    decided again by the process that loads it.
    """

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {
            "postgres_url_env": dg.Field(
                str,
                default_value=PG_URL_ENV,
                description="Name of the environment variable with the PostgreSQL URL; unset or empty = SQLite.",
            ),
            "dagster_home": dg.Field(
                dg.StringSource,
                description="The instance home; SQLite storage lives in <dagster_home>/storage, "
                "where Dagster's default keeps it.",
            ),
        }

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> DagsterStorage:
        env_name = config_value["postgres_url_env"]
        url = os.environ.get(env_name, "").strip()
        backend = "postgresql" if url else "sqlite"
        unrecorded = _check_backend(config_value["dagster_home"], backend, env_name)
        if not url:
            storage = DagsterSqliteStorage.from_local(
                base_dir=str(Path(config_value["dagster_home"]) / "storage"), inst_data=inst_data
            )
            _record(unrecorded, backend)
            return storage
        # dagster_postgres is a hard dependency; imported here so the SQLite path never loads psycopg2.
        from dagster_postgres import DagsterPostgresStorage

        try:
            storage = DagsterPostgresStorage(postgres_url=_psycopg2_url(url), inst_data=inst_data)
        except Exception as exc:  # after dagster-postgres's own retries; the chain could echo the URL's password
            reason = exc.__cause__ or exc
            raise InstanceStorageError(
                f"cannot open Dagster instance storage on PostgreSQL from ${env_name}: "
                f"{type(reason).__name__}: {_redact(str(reason), url)}"
            ) from None
        _record(unrecorded, backend)
        return storage


def _record(marker: Path | None, backend: str) -> None:
    if marker is not None:
        write_atomic(marker, f"{backend}\n".encode())


def _psycopg2_url(url: str) -> str:
    """The URL with the psycopg2 driver named: SQLAlchemy 2.1 maps a bare postgresql:// to
    psycopg 3, which is not installed; dagster-postgres ships psycopg2."""
    scheme, sep, rest = url.partition("://")
    return f"postgresql+psycopg2://{rest}" if sep and scheme in ("postgres", "postgresql") else url


def _redact(message: str, url: str) -> str:
    """The error text without the URL (it may hold a password)."""
    return message.replace(_psycopg2_url(url), "<url>").replace(url, "<url>")


if __name__ == "__main__":
    # `python -m chpit_assets.instance`: the instance set-up `make dev` and `make daemon` run first.
    default_dagster_home()
    with dg.DagsterInstance.get() as _instance:
        print(f"{WRITER_POOL}: limit {prepare_instance(_instance)} on {os.environ['DAGSTER_HOME']}")
