"""The Dagster instance: which storage it uses, and its set-up (writer pool, languages, dead runs).

Storage is chosen by the instance's own file, with Dagster's own storages only (issue 17.1):
`dagster.yaml` keeps runs, event logs and schedules in SQLite under $DAGSTER_HOME (Dagster's
default); `dagster.postgres.yaml` appended to it (`make INSTANCE=postgres`) keeps them in the
PostgreSQL database named by $CHPIT_PG_URL, in every process that loads that instance (webserver,
daemon, run and Celery workers). `open_instance` refuses a process that disagrees with the file it
finds (issue 18.4), so nobody is shown an empty instance by accident.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HOME = PROJECT_ROOT / "data" / "dagster_home"
INSTANCE_FILE = PROJECT_ROOT / "dagster.yaml"
POSTGRES_FILE = PROJECT_ROOT / "dagster.postgres.yaml"
WRITER_POOL = "duckdb_writer"

SETUP_LOCK = ".chpit-setup.lock"
PG_URL_ENV = "CHPIT_PG_URL"
"""The variable dagster.postgres.yaml reads: postgresql+psycopg2://user:password@host:5432/db."""
PG_SCHEME = "postgresql+psycopg2://"


class InstanceStorageError(RuntimeError):
    """The instance's storage cannot be opened, or this process's environment disagrees with it."""


def default_dagster_home(environ: MutableMapping[str, str] = os.environ) -> None:
    """Issue 14.1: with DAGSTER_HOME unset, use the project's data/dagster_home (given the shipped
    dagster.yaml if it has none), as `make` does, and say so once on stderr."""
    if environ.get("DAGSTER_HOME"):
        return
    DEFAULT_HOME.mkdir(parents=True, exist_ok=True)
    if not (DEFAULT_HOME / "dagster.yaml").exists():
        install_instance_file(DEFAULT_HOME, postgres=bool(environ.get(PG_URL_ENV, "").strip()))
    environ["DAGSTER_HOME"] = str(DEFAULT_HOME)
    print(f"DAGSTER_HOME is not set; using {DEFAULT_HOME}", file=sys.stderr, flush=True)


def prepare_instance(instance: dg.DagsterInstance) -> int | None:
    """Issue 18.5: record the writer pool's limit (dagster.yaml's `default_limit`) on the instance now.

    On a fresh instance Dagster's run queue records a pool's default limit during its first pass and
    applies it only from the next, so a first batch of queued runs could start together. Recording it
    at set-up (make run/dev/daemon, the CLI) closes that window; an existing limit is left as set.
    The published languages are registered as `lang` partitions here too (issue 14.6).
    Returns the pool's limit."""
    from chpit_assets.defs.partitions import register_langs
    from chpit_assets.langs import BENCH_LANGS

    register_langs(instance, BENCH_LANGS)  # the published languages are partitions from the start
    instance.event_log_storage.initialize_concurrency_limit_to_default(WRITER_POOL)
    return instance.event_log_storage.get_concurrency_info(WRITER_POOL).slot_count


def pool_granularity(instance: dg.DagsterInstance) -> str:
    """`run` or `op`: how the instance hands out pool slots (dagster.yaml `concurrency: pools:
    granularity:`; Dagster's default, unset, means `op`)."""
    granularity = instance.get_concurrency_config().pool_config.pool_granularity
    return granularity.value if granularity is not None else "op"


def install_instance_file(home: Path, *, postgres: bool) -> None:
    """$DAGSTER_HOME/dagster.yaml from the shipped file, with the PostgreSQL storage appended when asked."""
    text = INSTANCE_FILE.read_text(encoding="utf-8")
    if postgres:
        text += "\n" + POSTGRES_FILE.read_text(encoding="utf-8")
    (home / "dagster.yaml").write_text(text, encoding="utf-8")


def open_instance() -> dg.DagsterInstance:
    """The instance of $DAGSTER_HOME, or an InstanceStorageError saying what to fix (issue 18.4).

    Refused: a URL without the psycopg2 driver (SQLAlchemy would look for psycopg 3, which is not
    installed); $CHPIT_PG_URL set for an instance whose file keeps SQLite, or unset for one that
    keeps PostgreSQL; a database that does not answer (named by the variable, never by the URL)."""
    url = os.environ.get(PG_URL_ENV, "").strip()
    if url and not url.startswith(PG_SCHEME):
        raise InstanceStorageError(f"${PG_URL_ENV} must start with {PG_SCHEME} (the driver dagster-postgres installs)")
    home = Path(os.environ["DAGSTER_HOME"])
    postgres = _keeps_postgres(home / "dagster.yaml")
    if postgres and not url:
        raise InstanceStorageError(
            f"the instance in {home} keeps its runs in PostgreSQL, but ${PG_URL_ENV} is unset: set it "
            "(the same in every process), or point DAGSTER_HOME at a SQLite instance"
        )
    if url and not postgres:
        raise InstanceStorageError(
            f"${PG_URL_ENV} is set, but the instance in {home} keeps its runs in SQLite: set that instance up "
            f"for PostgreSQL (make INSTANCE=postgres, docs/operations.md), or unset ${PG_URL_ENV}"
        )
    try:
        # Creating a fresh home's storages and migrating them is not safe from two processes at once
        # (issue 23.5: two first runs 0.3 s apart left "more than one head"): one at a time.
        with setup_lock(home):
            instance = dg.DagsterInstance.get()
            instance.get_runs(limit=1)  # a PostgreSQL that does not answer fails here, not in the middle of a run
        return instance
    except Exception as exc:
        if not postgres:
            raise
        reason = exc.__cause__ or exc  # dagster-postgres's "too many retries" wraps the driver's error
        message = str(reason).replace(url, "<url>").splitlines()[0]
        raise InstanceStorageError(
            f"cannot open the instance's PostgreSQL storage from ${PG_URL_ENV}: {type(reason).__name__}: {message}"
        ) from None


@contextmanager
def setup_lock(home: Path) -> Iterator[None]:
    """The instance's set-up lock; a second process says it waits, and for what."""
    home.mkdir(parents=True, exist_ok=True)
    with open(home / SETUP_LOCK, "a", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting: another process is setting up the Dagster instance in {home}", file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _keeps_postgres(instance_file: Path) -> bool:
    try:
        config = yaml.safe_load(instance_file.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return False
    return "postgres" in (config.get("storage") or {})


if __name__ == "__main__":
    # `python -m chpit_assets.instance`: the instance set-up `make dev` and `make daemon` run first.
    default_dagster_home()
    with open_instance() as _instance:
        print(f"{WRITER_POOL}: limit {prepare_instance(_instance)} on {os.environ['DAGSTER_HOME']}")
