"""The instance's run launcher: each run in a process forked from one that has already loaded the code.

Why (issue 27.2): Dagster's default launcher asks the code server to start `dagster api execute_run`
in a new interpreter, which imports Dagster and the code location before it executes a single step:
2.5 s on an idle core, over 10 s on the shared 2 cores under load, paid by every run of a backfill.
A nightly after one new edition is four runs of a second or two of work each, so that import was
most of its cost. Here a fork server (the standard library's `multiprocessing` "forkserver",
started once per launching process: the CLI's driver, the daemon, the webserver) imports Dagster
and `chpit_assets.definitions` once; each run is a fork of it, executing the body of
`dagster api execute_run` on the instance it opened, with the launching process's environment and
working folder of that moment (a fork server started earlier must not hand a run a stale
$CHPIT_DATA_DIR), and with the code on disk: a run forked after a source file of the project changed
(an edit, then "Reload" in the UI) does not run the fork server's older copy, it replaces itself
with a fresh `dagster api execute_run`, as the default launcher would have started it. A process
that launches runs one after another (the backfill driver: `keep_standby`) keeps one worker forked
ahead, its instance open, waiting for the next launch (`_Standby`).

What the default launcher gives and this keeps: the run is a process of its own (a crash or kill -9
takes only that run down), its origin is its job in location `chpit` as before (the UI lists it
there), termination interrupts it as Dagster's code server does (SIGINT: the run ends CANCELED), and
run monitoring asks this launcher whether the worker lives (its host and pid are the run's
`chpit/worker` tag), so a run whose process died is failed instead of staying STARTED.

Dagster exports no run launcher base class, though `run_launcher:` in dagster.yaml is the
documented place for one; this module and orchestration/backfill.py are the two that name Dagster
internals (tests/test_public_dagster_api.py). On Dagster's default SQLite storage, a worker and the
driver reach each file through one SQLAlchemy engine that keeps its connections open
(`KeptEnginesSqliteStorage`); with Dagster's local compute logs, a worker captures its stdout and
stderr into the same files with a thread instead of child processes (`ThreadedComputeLogManager`).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import multiprocessing
import os
import shutil
import signal
import sqlite3
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager, suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Self

import dagster as dg
import sqlalchemy

# Dagster's launcher interface and the run worker's entry point (see the module docstring).
from dagster._cli.api import _execute_run_command_body
from dagster._cli.utils import get_instance_for_cli
from dagster._core.instance.ref import InstanceRef
from dagster._core.launcher.base import CheckRunHealthResult, LaunchRunContext, RunLauncher, WorkerStatus
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.local_compute_log_manager import IO_TYPE_EXTENSION, LocalComputeLogManager
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS, create_db_conn_string
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes import ConfigurableClass, ConfigurableClassData
from dagster._utils import ensure_file, touch_file
from dagster._utils.interrupts import capture_interrupts, setup_interrupt_handlers
from sqlalchemy import Engine, create_engine, make_url
from sqlalchemy.pool import NullPool, QueuePool

from . import forkserver
from .processes import local_pid, process_alive, process_tag

WORKER_TAG = "chpit/worker"
FORKED_TAG = "chpit/worker-forked"
"""`ahead` when a standby worker ran the run (`_Standby`), `at launch` when one was forked for it."""
RUN_IMPORTS = [
    "dagster._core.instance.factory",
    "dagster._core.storage.sqlite_storage",
    "dagster._core.storage.runs",
    "dagster._core.storage.event_log",
    "dagster._core.storage.schedules",
    "dagster._core.storage.local_compute_log_manager",
    "dagster._core.executor.in_process",
    "upath",
    # `import upath` defers these to the first UPath, which the I/O manager makes in each run's first
    # step (0.03-0.05 s a run, issue 27.2); the rest are what a run's set-up imported on top.
    "upath.core",
    "upath.implementations.local",
    "fsspec.implementations.local",
    "dagster._core.storage.root",
    "dagster._core.execution.plan.active",
    "dagster._core.definitions.repository_definition.repository_data_builder",
    "dagster._core.workspace.autodiscovery",
    "chpit_assets.instance",
]
"""What every run worker imports before its first step, and `import dagster` does not: the
instance's storage (SQLAlchemy, Alembic), the compute log manager, the executor, the I/O manager's
paths. About 1 s a run when each worker imported them itself (issue 27.2). Imported here, so the
fork server, which preloads this module, imports them once; a process that launches runs loads
them anyway when it opens its instance."""
for _name in RUN_IMPORTS:
    importlib.import_module(_name)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def loaded_sources(root: Path) -> dict[str, int]:
    """The project's source files this process has imported, with their modification times: its Python
    modules and its compiled one (a rebuilt walk, akn/flatten, cannot be reloaded into a fork either)."""
    found = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith((".py", ".so")) and Path(path).is_relative_to(root):
            found[path] = _mtime(path)
    return found


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def changed_since(loaded: Mapping[str, int]) -> list[str]:
    return [path for path, mtime in loaded.items() if _mtime(path) != mtime]


LOADED = loaded_sources(PROJECT_ROOT)
"""In the fork server: the sources its preload imported, as they were then."""


def _execute(args_json: str, environ: Mapping[str, str], cwd: str) -> None:
    """A run worker forked for its run: the environment and folder of the launch, then the body of
    `dagster api execute_run` (it exits non-zero only as that command does)."""
    _become_worker(environ, cwd)
    _restart_if_changed(args_json)
    run = dg.deserialize_value(args_json, ExecuteRunArgs)
    # As in that command: a Ctrl-C from here on is the run's, raised in it at its first chance.
    with capture_interrupts(), get_instance_for_cli(instance_ref=_worker_ref(run.instance_ref)) as instance:
        _run(instance, run)


def _standby(inbox: Connection, environ: Mapping[str, str], cwd: str, ref_json: str) -> None:
    """A run worker forked before its run (`_Standby`): it opens the instance, then waits for the
    run's arguments. It ends without a run when the launcher closes its end of the pipe (the standby
    discarded, or the launching process gone: even killed, its end closes with it), or on Ctrl-C."""
    _become_worker(environ, cwd)
    ref = dg.deserialize_value(ref_json, InstanceRef)
    with ExitStack() as stack:
        try:
            instance = stack.enter_context(get_instance_for_cli(instance_ref=_worker_ref(ref)))
            args_json = inbox.recv_bytes().decode()
        except (EOFError, KeyboardInterrupt):
            return  # no run came (a Ctrl-C during its run is the run's to handle, in `_run`)
        with capture_interrupts():  # a Ctrl-C from here on is the run's, as in `_execute`
            inbox.close()
            _restart_if_changed(args_json)
            run = dg.deserialize_value(args_json, ExecuteRunArgs)
            if run.instance_ref != ref:  # the launcher sends only a run of the instance it was made for
                raise dg.DagsterInvariantViolationError(
                    f"run {run.run_id} sent to a standby worker of another instance"
                )
            _run(instance, run)


def _become_worker(environ: Mapping[str, str], cwd: str) -> None:
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    # What the fork server imported (Dagster, polars, DuckDB, the code location: some 235,000 objects)
    # lives as long as the run: out of the collector's reach, a full collection during a step no
    # longer walks all of it (0.1-0.13 s each, several a rebuild's run; issue 27.2). The worker ends
    # with os._exit (multiprocessing), so nothing frozen is ever finalised late.
    gc.freeze()
    setup_interrupt_handlers()  # SIGTERM as SIGINT, as in Dagster's own run workers


def _restart_if_changed(args_json: str) -> None:
    """The fork server's code is older than the files: run `dagster api execute_run` afresh instead."""
    if changed_since(LOADED):
        os.execv(sys.executable, [sys.executable, "-m", "dagster", "api", "execute_run", args_json])


def _worker_ref(ref: InstanceRef | None) -> InstanceRef | None:
    return with_threaded_log_capture(with_kept_engines(ref))


def _run(instance: dg.DagsterInstance, run: ExecuteRunArgs) -> None:
    """What `dagster api execute_run` does on its open instance (the caller captures interrupts as it
    does), but for the copy of each event it serialises for a caller reading its output: nobody reads
    a forked worker's, the events are in the event log."""
    code = _execute_run_command_body(
        run.run_id, instance, lambda event: None, set_exit_code_on_failure=bool(run.set_exit_code_on_failure)
    )
    if code:
        sys.exit(code)


def with_kept_engines(ref: InstanceRef | None) -> InstanceRef | None:
    """`ref` with Dagster's default SQLite storage replaced by `KeptEnginesSqliteStorage` (the same
    files, config and schema); any other storage (PostgreSQL) as it is."""
    return _with_class(ref, "storage_data", DAGSTER_SQLITE_STORAGE, KEPT_ENGINES_STORAGE)


def with_threaded_log_capture(ref: InstanceRef | None) -> InstanceRef | None:
    """`ref` with Dagster's local compute log manager replaced by `ThreadedComputeLogManager` (the
    same folder and settings); any other compute log manager as it is."""
    return _with_class(ref, "compute_logs_data", DAGSTER_COMPUTE_LOGS, THREADED_COMPUTE_LOGS)


def with_dagster_engines(ref: InstanceRef | None) -> InstanceRef | None:
    """`ref` as Dagster wrote it: what a run is launched with, so that a worker started afresh
    (`dagster api execute_run`, after a source changed) needs nothing of this module to open it."""
    return _with_class(ref, "storage_data", KEPT_ENGINES_STORAGE, DAGSTER_SQLITE_STORAGE)


def _with_class(ref: InstanceRef | None, field: str, old: tuple[str, str], new: tuple[str, str]) -> InstanceRef | None:
    """`ref` with the class configured in `field` replaced by `new` (same config) when it is `old`."""
    data = getattr(ref, field) if ref is not None else None
    if ref is None or data is None or (data.module_name, data.class_name) != old:
        return ref
    replaced: dict[str, Any] = {field: ConfigurableClassData(*new, data.config_yaml)}
    return ref._replace(**replaced)


class _KeptEngines:
    """One SQLAlchemy engine per database file for the life of the storage, its connections pooled,
    where Dagster's SQLite storages create an engine and open a connection for every query and event
    and dispose of both after (issue 27.2).

    An engine is cheap to keep and dear to make: creating one, and compiling each statement again
    because its compiled-statement cache is the engine's, was 0.3-0.45 s of CPU in each language run
    of a nightly (the same rebuild restored and run alternately with and without). A connection is
    dear too: each of the 440 queries of a language run and the 1,000 of its driver opened the file
    and read its schema again (with `_schema_ready`, 0.35 s a nightly side by side); and the files are
    in WAL mode, where SQLite checkpoints the WAL into the file and deletes it whenever the last
    connection to a file closes, so each of those queries also paid a checkpoint and the WAL's
    creation. A kept connection is never the last: the WAL stays and SQLite checkpoints it as it
    fills (every 1,000 pages); each commit is synced as before. A pooled connection is returned
    rolled back, so between queries it holds no transaction and no lock: other processes' writers
    and SQLite's checkpoints are not held up, and each query reads the file as it is then. What is
    read and written, in which transactions and with which busy timeout, is Dagster's. No limit on
    connections open at once (as with Dagster's engines): a query opened inside another never waits
    for a free one; the extra ones are closed on return, the kept ones when the instance is disposed."""

    POOL_SIZE = 2
    """Connections kept per file: the driver queries from two threads (orchestration/backfill.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._engines: dict[str, Engine] = {}
        self._engines_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def _engine(self, conn_string: str, **connect_args: Any) -> Engine:
        with self._engines_lock:
            engine = self._engines.get(conn_string)
            if engine is None:
                engine = create_engine(
                    conn_string,
                    poolclass=QueuePool,
                    pool_size=self.POOL_SIZE,
                    max_overflow=-1,
                    connect_args=connect_args,
                )
                self._engines[conn_string] = engine
            return engine

    def dispose(self) -> None:
        super().dispose()  # type: ignore[misc]
        with self._engines_lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.dispose()


def _schema_ready(database: str | None, *tables: str) -> bool:
    """Whether the SQLite file `database` holds a Dagster schema stamped with its Alembic revision
    (and `tables`): all that Dagster's storages check before they would create the schema. They also
    name the head revision, loading some 90 migration scripts from disk each time (four times a run),
    though any revision, old or new, makes them skip the creation. Enough here: a process opening
    this storage was launched by one, or is one, that has opened the same files with Dagster's own
    storage, which created them and checked their revision."""
    if not database or not os.path.exists(database):
        return False
    try:
        with closing(sqlite3.connect(database, timeout=SQLITE_BUSY_TIMEOUT_SECONDS)) as conn:
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"alembic_version", *tables} <= names:
                return False
            return conn.execute("SELECT version_num FROM alembic_version").fetchone() is not None
    except sqlite3.Error:
        return False  # Dagster's own set-up then says what is wrong with the file


class _KeptEngine(_KeptEngines):
    """A storage in one file (runs, schedules): Dagster's `connect` and `from_local`, but for the
    engine and for the schema check (`_schema_ready`)."""

    _conn_string: str
    DATABASE: str
    TABLES: tuple[str, ...]

    @contextmanager
    def connect(self) -> Iterator[Any]:
        with self._engine(self._conn_string).connect() as conn, conn.begin():
            yield conn

    @classmethod
    def from_local(cls, base_dir: str, inst_data: ConfigurableClassData | None = None) -> Self:
        conn_string = create_db_conn_string(base_dir, cls.DATABASE)
        if _schema_ready(make_url(conn_string).database, *cls.TABLES):
            return cls(conn_string, inst_data)
        return super().from_local(base_dir, inst_data)  # type: ignore[misc]


class KeptEnginesSqliteRunStorage(_KeptEngine, SqliteRunStorage):
    DATABASE, TABLES = "runs", ("runs", "instance_info")


class KeptEnginesSqliteScheduleStorage(_KeptEngine, SqliteScheduleStorage):
    DATABASE, TABLES = "schedules", ("jobs",)


def _staging_name(path: str) -> str:
    """Where this process and thread stage a file before it is linked or renamed to `path`."""
    return f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"


def _sync(path: str) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


class KeptEnginesSqliteEventLogStorage(_KeptEngines, SqliteEventLogStorage):
    def _initdb(self, engine: Engine, for_index_shard: bool = False) -> None:
        database = engine.url.database
        if _schema_ready(database, "event_logs"):
            return
        if not for_index_shard and database and self._place_run_shard(database):
            return
        super()._initdb(engine, for_index_shard)

    def _place_run_shard(self, database: str) -> bool:
        """Make a new run's event-log file a copy of an empty one that Dagster's own `_initdb` made.

        Each run gets a file of its own, made when the run is created (the driver logs its planned
        materialisations into it): Dagster creates the tables and stamps the Alembic revision, loading
        its some 90 migration scripts from disk twice, 0.06 s a run on the critical path of a nightly
        (four runs). The copy is Dagster's file byte for byte (schema, revision, WAL mode), made once
        per Dagster and SQLAlchemy release and kept beside the runs' files under a name Dagster's
        `*.db` globs do not match. It is linked into place, never over a file that appeared meanwhile
        (another process made it: False, and Dagster's `_initdb` takes over as before, as it does where
        the file system has no hard links). The copy is
        complete and synced before it is linked: a kill leaves at most a staged `.tmp` file, never a
        half-made run file."""
        template = self._run_shard_template()
        staged = _staging_name(database)
        try:
            shutil.copyfile(template, staged)
            _sync(staged)
            os.link(staged, database)
        except OSError:  # made meanwhile by another process, or no hard links here: Dagster's own set-up
            return False
        finally:
            with suppress(FileNotFoundError):
                os.unlink(staged)
        return True

    def _run_shard_template(self) -> str:
        """The template's path, made first when it is missing or is not a complete Dagster schema (a
        file damaged on disk would otherwise be copied into every new run: each would fail to log)."""
        path = os.path.join(
            self._base_dir, f".run-shard-dagster-{dg.__version__}-sqlalchemy-{sqlalchemy.__version__}.sqlite"
        )
        if not _schema_ready(path, "event_logs"):
            staged = _staging_name(path)
            engine = create_engine(f"sqlite:///{staged}", poolclass=NullPool)
            try:
                SqliteEventLogStorage._initdb(self, engine)
            finally:
                engine.dispose()  # the last connection closed: SQLite checkpoints the WAL into the file
            if os.path.exists(f"{staged}-wal"):
                raise RuntimeError(f"{staged}: SQLite left its WAL beside the new run-shard template")
            _sync(staged)  # on disk before its name is: a crash never leaves an empty template
            os.replace(staged, path)  # concurrent makers write the same schema; the last one stays
        return path

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Any]:
        # Dagster's own, but for the engine: the lock, the shard's first-use set-up, one transaction.
        with self._db_lock:
            engine = self._shard_engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def has_table(self, table_name: str) -> bool:
        # Asked on every dynamic-partition lookup and every tagged asset event: Dagster's makes an engine.
        engine = self._shard_engine(INDEX_SHARD_NAME)
        with engine.connect() as conn:
            return bool(engine.dialect.has_table(conn, table_name))

    def _shard_engine(self, shard: str) -> Engine:
        return self._engine(self.conn_string_for_shard(shard), timeout=SQLITE_BUSY_TIMEOUT_SECONDS)


class KeptEnginesSqliteStorage(DagsterSqliteStorage):
    """Dagster's default storage (runs, event logs and schedules in SQLite, in the same files) with
    each file reached through one engine (`_KeptEngines`): what a run worker and the backfill driver
    open their instance with."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        # Not DagsterSqliteStorage.__init__, which would open (and check the schema of) Dagster's own first.
        self.base_dir = base_dir
        self._run_storage = KeptEnginesSqliteRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = KeptEnginesSqliteEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = KeptEnginesSqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]):
        return cls.from_local(inst_data=inst_data, **config_value)


DAGSTER_SQLITE_STORAGE = (DagsterSqliteStorage.__module__, DagsterSqliteStorage.__name__)
DAGSTER_COMPUTE_LOGS = (LocalComputeLogManager.__module__, LocalComputeLogManager.__name__)
KEPT_ENGINES_STORAGE = (KeptEnginesSqliteStorage.__module__, KeptEnginesSqliteStorage.__name__)
THREADED_COMPUTE_LOGS = (__name__, "ThreadedComputeLogManager")


class ThreadedComputeLogManager(LocalComputeLogManager):
    """Dagster's local compute log manager (the same files, read by the UI the same way) that captures
    a run's stdout and stderr without child processes: what a run worker opens its instance with.

    Dagster's own mirrors each captured stream back to the console with a `tail -F` process and a
    Python watcher that kills the tail should the run die: four processes started at each run's
    first step and stopped at its end, 15-65 ms a run on the critical path, and the watchers'
    interpreter starts on the other core (issue 27.2). Here a thread of the worker follows each
    file instead (`_mirrored`); killed, the run takes it along, so nothing can be orphaned."""

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]) -> Self:
        return cls(inst_data=inst_data, **config_value)  # Dagster's makes a LocalComputeLogManager, not `cls`

    @contextmanager
    def capture_logs(self, log_key: Sequence[str]) -> Iterator[CapturedLogContext]:
        stdout = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDOUT])
        stderr = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDERR])
        with _mirrored(sys.stdout, stdout), _mirrored(sys.stderr, stderr):
            yield CapturedLogContext(log_key)
        # Dagster's sign that the capture is complete (the UI stops following the files)
        touch_file(self.complete_artifact_path(log_key))


@contextmanager
def _mirrored(stream: Any, path: str) -> Iterator[None]:
    """While the body runs, whatever the process writes to `stream`'s file descriptor (Python's and C
    code's alike) goes to the file at `path`, and a thread copies the file as it grows to where the
    stream went before (as `tail -F` does for Dagster's manager). A stream with no file descriptor
    (a test's capture) is left alone, as Dagster leaves it."""
    ensure_file(path)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    stream.flush()
    console = os.dup(fd)
    follower = None
    try:
        with open(path, "ab") as file:
            os.dup2(file.fileno(), fd)
        follower = _Follower(path, os.dup(console))  # its own: it closes it when it ends, at any time
        yield
    finally:
        stream.flush()
        os.dup2(console, fd)
        os.close(console)
        if follower is not None:
            follower.finish()


class _Follower(threading.Thread):
    """Copies a file to a descriptor as the file grows, until `finish` (then up to the file's end)."""

    POLL_SECONDS = 0.2
    FINISH_SECONDS = 5.0
    """How long the end of a run waits for the last copy: a console nobody reads would block it."""

    def __init__(self, path: str, console: int):
        super().__init__(name="chpit-log-mirror", daemon=True)
        self._file = open(path, "rb")  # noqa: SIM115 (closed by the thread)
        self._console = console
        self._done = threading.Event()
        self.start()

    def run(self) -> None:
        try:
            while True:
                done = self._done.is_set()  # read before the file: what was written before finish is copied
                while data := self._file.read(1 << 16):
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._console, view) :]
                if done:
                    return
                self._done.wait(self.POLL_SECONDS)
        except OSError:
            pass  # the console is gone (a closed pipe): the file keeps the output
        finally:
            self._file.close()
            os.close(self._console)

    def finish(self) -> None:
        self._done.set()
        self.join(self.FINISH_SECONDS)


def _launch_context(ref: InstanceRef | None) -> tuple[dict[str, str], str, str]:
    """What a run worker takes from its launch: the environment, the working folder, the instance."""
    return dict(os.environ), os.getcwd(), dg.serialize_value(ref)


@dataclass
class _Standby:
    """A run worker forked before its run (`_standby`), with the environment, working folder and
    instance of the moment it was made: a launch with the same three hands it its run instead of
    forking one.

    Why (issue 27.2): a nightly's runs follow one another (the writer pool lets one language run at
    a time), and each one's worker was forked when the previous run had ended: the fork, the
    worker's set-up and the instance's opening, on the critical path of every run. A standby does
    them while the previous run executes, on the core that run leaves free. Measured: 0.07 s less
    start-up a rebuild of four runs, about 1% of it (docs/benchmarks.md)."""

    process: multiprocessing.process.BaseProcess
    outbox: Connection
    made_for: tuple[dict[str, str], str, str]

    def take(self, made_for: tuple[dict[str, str], str, str], args_json: str) -> bool:
        """Send this worker its run if it was made for this launch's environment, folder and instance
        and still waits; otherwise discard it (False: the caller forks a worker for the run)."""
        try:
            if made_for != self.made_for or not self.process.is_alive():
                return False
            self.outbox.send_bytes(args_json.encode())
            return True
        except OSError:
            return False  # it ended meanwhile (a Ctrl-C reaches it too)
        finally:
            self.outbox.close()  # sent or not, this worker gets nothing more: it runs, or ends at EOF

    def discard(self) -> None:
        self.outbox.close()


class ForkingRunLauncher(RunLauncher, ConfigurableClass):
    """`run_launcher: {module: chpit_assets.orchestration.launcher, class: ForkingRunLauncher}`."""

    def __init__(self, inst_data: ConfigurableClassData | None = None):
        self._inst_data = inst_data
        self._workers: dict[str, multiprocessing.process.BaseProcess] = {}
        self._context: Any = None
        self._standby: _Standby | None = None
        self._standby_lock = threading.Lock()
        self._keeps_standby = False
        super().__init__()

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict:
        return {}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]):
        return cls(inst_data=inst_data)

    def _fork_server(self):
        if self._context is None:
            self._context = forkserver.context()
        return self._context

    def prestart(self) -> None:
        """Start the fork server now instead of at the first launch (when `python -m chpit_assets`
        has not already: orchestration/forkserver.py). Its import of Dagster and the code location
        runs in its own process: started before the driver submits a backfill, it overlaps the
        driver's first iterations instead of delaying the first run. Idempotent."""
        forkserver.start()

    def keep_standby(self) -> None:
        """From now on keep a worker forked ahead of the next launch (`_Standby`): for a process that
        launches runs one after another (the backfill driver, orchestration/backfill.py), not for a
        daemon or webserver that launches one now and then. The first is forked in the background
        (its fork waits for the fork server's import of the code); a launch meanwhile waits for it,
        as it would for a fork of its own. Idempotent."""
        if self._keeps_standby:
            return
        self._keeps_standby = True
        atexit.register(self._discard_standby)  # before multiprocessing's own exit joins its children
        made_for = _launch_context(with_dagster_engines(self._instance.get_ref()))
        self._standby_lock.acquire()  # taken here, released by the thread once the standby exists
        threading.Thread(target=self._first_standby, args=(made_for,), name="chpit-standby", daemon=True).start()

    def _first_standby(self, made_for: tuple[dict[str, str], str, str]) -> None:
        try:
            self._standby = self._forked_standby(made_for)
        finally:
            self._standby_lock.release()

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        origin = run.job_code_origin
        if origin is None:
            raise dg.DagsterInvariantViolationError(f"run {run.run_id} has no job origin to execute")
        ref = with_dagster_engines(self._instance.get_ref())
        args_json = dg.serialize_value(ExecuteRunArgs(job_origin=origin, run_id=run.run_id, instance_ref=ref))
        made_for = _launch_context(ref)
        with self._standby_lock:
            standby, self._standby = self._standby, None
            if standby is not None and standby.take(made_for, args_json):
                worker, forked = standby.process, "ahead"
            else:
                name = f"dagster-run-{run.run_id[:8]}"
                worker = self._fork_server().Process(target=_execute, args=(args_json, *made_for[:2]), name=name)
                worker.start()
                forked = "at launch"
        # Only unfinished runs' workers are asked about (monitoring, join); is_alive() reaps the rest.
        self._workers = {r: w for r, w in self._workers.items() if w.is_alive()}
        self._workers[run.run_id] = worker
        self._instance.add_run_tags(run.run_id, {WORKER_TAG: process_tag(worker.pid), FORKED_TAG: forked})
        with self._standby_lock:
            if self._keeps_standby and self._standby is None:  # one at a time; none after dispose
                self._standby = self._forked_standby(made_for)

    def _forked_standby(self, made_for: tuple[dict[str, str], str, str]) -> _Standby:
        inbox, outbox = multiprocessing.Pipe(duplex=False)
        process = self._fork_server().Process(target=_standby, args=(inbox, *made_for), name="dagster-run-standby")
        process.start()
        inbox.close()  # the worker's end: this process keeps only its own
        return _Standby(process, outbox, made_for)

    def _discard_standby(self) -> None:
        with self._standby_lock:
            standby, self._standby = self._standby, None
        if standby is not None:
            standby.discard()

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        self._instance.report_run_canceling(run)
        pid = local_pid(run.tags.get(WORKER_TAG, ""))
        if pid is None or not process_alive(pid):
            self._instance.report_engine_event(f"no live worker process to interrupt for run {run_id}", run)
            return False
        os.kill(pid, signal.SIGINT)
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        worker = self._workers.get(run.run_id)
        if worker is not None:
            alive = worker.is_alive()  # also reaps it
        else:
            pid = local_pid(run.tags.get(WORKER_TAG, ""))
            if pid is None:
                return CheckRunHealthResult(WorkerStatus.UNKNOWN, f"run {run.run_id}: worker on another host")
            alive = process_alive(pid)
        if alive:
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(
            WorkerStatus.FAILED, f"the run's worker process ({run.tags.get(WORKER_TAG)}) is gone"
        )

    def worker_sentinels(self) -> list[int]:
        """The sentinels of the live run workers this launcher started: each becomes ready when its
        worker exits (`multiprocessing.connection.wait`)."""
        return [worker.sentinel for worker in self._workers.values() if worker.is_alive()]

    def join(self, timeout: int = 30) -> None:
        for worker in list(self._workers.values()):
            worker.join(timeout)

    def dispose(self) -> None:
        self._keeps_standby = False
        self._discard_standby()
        self._workers.clear()
