"""The forking run launcher (issue 27.2): what run monitoring and termination ask of it.

Launching itself is exercised by every backfill the suite drives (make run, the CLI, the nightly,
the kill-point harness); here the worker bookkeeping, on a real instance and real processes.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
import sqlalchemy

from chpit_assets.akn import flatten
from chpit_assets.orchestration.forkserver import PRELOAD
from chpit_assets.orchestration.launcher import (
    FORKED_TAG,
    RUN_IMPORTS,
    WORKER_TAG,
    ForkingRunLauncher,
    KeptEnginesSqliteEventLogStorage,
    changed_since,
    loaded_sources,
    with_dagster_engines,
    with_kept_engines,
)
from chpit_assets.orchestration.processes import local_pid, process_alive

from . import probe_job


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def _run(instance: dg.DagsterInstance, worker: str, status=dg.DagsterRunStatus.STARTED) -> dg.DagsterRun:
    run = dg.DagsterRun(job_name="probe", run_id=str(uuid.uuid4()), status=status, tags={WORKER_TAG: worker})
    return instance.add_run(run)


def _launcher(instance: dg.DagsterInstance) -> ForkingRunLauncher:
    launcher = ForkingRunLauncher()
    launcher.register_instance(instance)
    return launcher


def test_a_live_worker_is_running_and_a_dead_one_fails_the_run(instance) -> None:
    launcher = _launcher(instance)
    here = socket.gethostname()
    alive = launcher.check_run_worker_health(_run(instance, f"{here}:{os.getpid()}"))
    assert alive.status.value == "RUNNING"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = launcher.check_run_worker_health(_run(instance, f"{here}:{gone.pid}"))
    assert dead.status.value == "FAILED" and str(gone.pid) in dead.msg


def test_a_worker_on_another_host_is_not_judged_from_here(instance) -> None:
    result = _launcher(instance).check_run_worker_health(_run(instance, "elsewhere.invalid:1"))
    assert result.status.value == "UNKNOWN"


def test_terminate_interrupts_the_worker_and_marks_the_run_canceling(instance) -> None:
    # A stand-in worker that, like Dagster's run worker, ends on SIGINT. Dagster's sets its handler
    # itself; this one gets the default, or it would inherit a runner's (or `cmd &`'s) ignored SIGINT.
    worker = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        run = _run(instance, f"{socket.gethostname()}:{worker.pid}")
        assert _launcher(instance).terminate(run.run_id)
        assert worker.wait(timeout=10) != 0 and worker.returncode in (-signal.SIGINT, 1)
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.CANCELING
    finally:
        worker.kill()


def test_terminate_says_so_when_the_run_is_finished_or_its_worker_gone(instance) -> None:
    launcher = _launcher(instance)
    finished = _run(instance, f"{socket.gethostname()}:1", status=dg.DagsterRunStatus.SUCCESS)
    assert not launcher.terminate(finished.run_id)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    time.sleep(0.1)
    orphan = _run(instance, f"{socket.gethostname()}:{gone.pid}")
    assert not launcher.terminate(orphan.run_id)
    logged = [e.message for e in instance.all_logs(orphan.run_id)]
    assert any("no live worker process" in m for m in logged)


def test_a_source_file_changed_after_the_fork_server_loaded_it_is_noticed(tmp_path, monkeypatch) -> None:
    # A run forked from a server that loaded older code would run that code: the worker checks first.
    package = tmp_path / "probe_package"
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("probe_package")
    loaded = loaded_sources(tmp_path)
    assert list(loaded) == [str(package / "__init__.py")]
    assert changed_since(loaded) == []
    os.utime(package / "__init__.py", ns=(1, 1))
    assert changed_since(loaded) == [str(package / "__init__.py")]


def test_the_compiled_walk_is_a_source_the_fork_server_watches() -> None:
    # A rebuilt extension module cannot be reloaded into a forked run either: its file counts too.
    assert flatten.__file__ is not None and flatten.__file__.endswith(".so")
    project = Path(flatten.__file__).parents[2]
    assert flatten.__file__ in loaded_sources(project)


def test_the_fork_server_preloads_the_code_location_and_records_its_sources_last() -> None:
    assert PRELOAD[-1] == "chpit_assets.orchestration.launcher" and "chpit_assets.definitions" in PRELOAD


def test_the_fork_server_resolves_the_repository_its_run_workers_load() -> None:
    """Issue 27.2: made once in the server instead of in every run, and cached on the `Definitions`
    object a worker's code pointer names, so each fork finds it made."""
    assert PRELOAD.index("chpit_assets.orchestration.preload") < PRELOAD.index("chpit_assets.orchestration.launcher")
    found = _fresh_python(
        "from chpit_assets.definitions import defs\n"
        "print(defs.has_resolved_repository_def())\n"
        "from chpit_assets.orchestration import preload\n"
        "print(defs.has_resolved_repository_def(), defs.get_repository_def() is preload.REPOSITORY)\n"
        "print(sorted(j.name for j in preload.JOBS))\n"
    )
    assert found.splitlines() == ["False", "True True", "['__ASSET_JOB', 'build']"]


def _write_parent(path: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(str(os.getppid()))


def test_prestart_starts_one_fork_server_that_the_launches_then_fork_from(tmp_path) -> None:
    """Issue 27.2: the driver starts the fork server before it submits (its import overlaps the
    backfill's first iteration); launches after that fork from the same server, never a second one."""
    launcher = ForkingRunLauncher()
    launcher.prestart()
    launcher.prestart()
    parents = []
    for n in range(2):
        worker = launcher._fork_server().Process(target=_write_parent, args=(str(tmp_path / f"{n}"),))
        worker.start()
        worker.join(120)
        assert worker.exitcode == 0
        parents.append(int((tmp_path / f"{n}").read_text(encoding="ascii")))
    assert parents[0] == parents[1] != os.getpid()


FORKING = {"run_launcher": {"module": "chpit_assets.orchestration.launcher", "class": "ForkingRunLauncher"}}


def _launched(instance: dg.DagsterInstance) -> tuple[dg.DagsterRun, int, str]:
    """A run of the probe job launched through the instance's launcher: the run, its worker's pid,
    and whether the worker was forked ahead or at the launch."""
    run = instance.create_run_for_job(
        probe_job.probe, job_code_origin=dg.reconstructable(probe_job.probe).get_python_origin()
    )
    instance.run_launcher.launch_run(SimpleNamespace(dagster_run=run))  # launch_run reads only the run
    tags = instance.get_run_by_id(run.run_id).tags
    worker = local_pid(tags[WORKER_TAG])
    assert worker is not None
    return run, worker, tags[FORKED_TAG]


def _finished(instance: dg.DagsterInstance, run: dg.DagsterRun) -> dg.DagsterRun:
    deadline = time.monotonic() + 120
    while not (found := instance.get_run_by_id(run.run_id)).is_finished and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _standby(launcher: ForkingRunLauncher):
    deadline = time.monotonic() + 120  # the first is forked once the fork server has imported the code
    while launcher._standby is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert launcher._standby is not None
    return launcher._standby.process


def test_a_launcher_keeping_a_standby_hands_each_run_to_a_worker_forked_before_its_launch(
    tmp_path, monkeypatch
) -> None:
    """Issue 27.2: the fork, the worker's set-up and the instance's opening happen before the launch,
    while the previous run executes. A standby runs the run as a worker forked for it would: with the
    launch's environment; one made under another environment is discarded, never handed a run."""
    monkeypatch.setenv(probe_job.OUT_ENV, str(tmp_path))
    monkeypatch.setenv(probe_job.VALUE_ENV, "first")
    with dg.instance_for_test(overrides=FORKING) as instance:
        launcher = instance.run_launcher
        launcher.keep_standby()
        launcher.keep_standby()  # idempotent: still one standby at a time
        run, worker, forked = _launched(instance)  # at once: the launch waits for the first standby
        assert forked == "ahead"
        assert _finished(instance, run).status == dg.DagsterRunStatus.SUCCESS
        assert (tmp_path / run.run_id).read_text(encoding="utf-8") == f"{worker} first"
        refilled = _standby(launcher)  # the next one, forked at the launch
        assert refilled.pid != worker
        monkeypatch.setenv(probe_job.VALUE_ENV, "second")
        run, worker, forked = _launched(instance)
        assert worker != refilled.pid and forked == "at launch"
        refilled.join(60)
        assert refilled.exitcode == 0  # discarded: it ended without a run
        assert _finished(instance, run).status == dg.DagsterRunStatus.SUCCESS
        assert (tmp_path / run.run_id).read_text(encoding="utf-8") == f"{worker} second"
        last = _standby(launcher)
        launcher.dispose()  # as the instance's disposal does
        last.join(60)
        assert last.exitcode == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(r.run_id for r in instance.get_runs())


def test_a_launcher_not_asked_keeps_no_standby(tmp_path, monkeypatch) -> None:
    """A daemon or the webserver launches runs now and then: no idle worker waits beside them."""
    monkeypatch.setenv(probe_job.OUT_ENV, str(tmp_path))
    with dg.instance_for_test(overrides=FORKING) as instance:
        run, worker, forked = _launched(instance)
        assert forked == "at launch"
        assert _finished(instance, run).status == dg.DagsterRunStatus.SUCCESS
        assert (tmp_path / run.run_id).read_text(encoding="utf-8") == f"{worker} "
        assert instance.run_launcher._standby is None


def test_a_standby_whose_launcher_died_ends_without_a_run(tmp_path) -> None:
    """Its end of the pipe closes with the launching process, even killed: the standby sees EOF."""
    code = (
        "import os, sys, time, dagster as dg\n"
        f"with dg.instance_for_test(overrides={FORKING!r}) as instance:\n"
        "    launcher = instance.run_launcher\n"
        "    launcher.keep_standby()\n"
        "    while launcher._standby is None: time.sleep(0.05)\n"
        "    print(launcher._standby.process.pid, flush=True)\n"
        "    time.sleep(600)\n"
    )
    launching = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        standby = int(launching.stdout.readline())
        assert process_alive(standby)
        launching.kill()
        launching.wait(30)
        deadline = time.monotonic() + 60
        while process_alive(standby) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(standby)
    finally:
        launching.kill()


def _fresh_python(code: str) -> str:
    """Run `code` in a new interpreter (nothing imported yet), assert it succeeds, return its output."""
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    return found.stdout


def test_the_fork_server_preloads_what_every_run_imports() -> None:
    """A run worker imported the instance's storage (SQLAlchemy, Alembic) itself: about 1 s a run.
    The launcher, which the fork server preloads, imports it."""
    _fresh_python(
        "import sys; import chpit_assets.orchestration.launcher as launcher; "
        "missing = [m for m in launcher.RUN_IMPORTS if m not in sys.modules]; assert not missing, missing"
    )
    assert RUN_IMPORTS and PRELOAD[-1] == "chpit_assets.orchestration.launcher"


RUN_PROBE = """
import sys, tempfile
import chpit_assets.orchestration.launcher
import dagster as dg

before = set(sys.modules)

@dg.asset
def upstream() -> int:
    return 1

@dg.asset
def downstream(upstream: int) -> int:
    return upstream + 1

with tempfile.TemporaryDirectory() as base:
    io = dg.FilesystemIOManager(base_dir=base)
    assert dg.materialize([upstream, downstream], resources={"io_manager": io}).success
print(sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("upath", "pathlib_abc", "fsspec")))
"""


def test_a_run_imports_no_path_library_the_fork_server_could_have_imported() -> None:
    """`import upath` defers its modules to the first UPath, which the pickling I/O manager makes in
    each run's first step: preloaded, that is 0.03-0.05 s less a run (issue 27.2)."""
    assert _fresh_python(RUN_PROBE).strip().splitlines()[-1] == "[]"


def test_the_fork_server_can_be_started_before_dagster_is_imported() -> None:
    """`python -m chpit_assets run|nightly` starts it first thing, so its import overlaps the command's."""
    _fresh_python(
        "import sys; from chpit_assets.orchestration import forkserver; "
        "assert 'dagster' not in sys.modules, 'dagster imported'; forkserver.start(); forkserver.start(); "
        "assert 'dagster' not in sys.modules, 'dagster imported by start'"
    )


def _wal(path: Path) -> Path:
    return path.with_name(f"{path.name}-wal")


def _files(instance: dg.DagsterInstance, run_id: str) -> list[Path]:
    """The SQLite files a run worker writes on the default storage: runs, the index shard, its own shard."""
    history = Path(instance.root_directory) / "history"
    return [history / "runs.db", history / "runs" / "index.db", history / "runs" / f"{run_id}.db"]


def test_a_worker_no_longer_checkpoints_on_every_write_and_nothing_is_lost(instance) -> None:
    """In WAL mode SQLite checkpoints and deletes the WAL when the last connection to a file closes:
    Dagster's own storage does so after every event. The worker's kept connection is never the last
    until the instance is disposed, and nothing written is lost or hidden from other processes."""
    run = _run(instance, "nowhere:1")
    instance.report_engine_event("first", run)
    shard = _files(instance, run.run_id)[2]
    assert not _wal(shard).exists()  # Dagster's own connection was the last: it checkpointed
    with dg.DagsterInstance.from_ref(with_kept_engines(instance.get_ref())) as worker:
        worker.report_engine_event("second", run)
        assert _wal(shard).exists()  # the write stays in the WAL: no checkpoint on close
        with dg.DagsterInstance.from_ref(instance.get_ref()) as other:  # what another process reads
            assert [e.message for e in other.all_logs(run.run_id)] == ["first", "second"]
    assert not _wal(shard).exists()  # disposed, its connections closed: the last one checkpointed
    assert [e.message for e in instance.all_logs(run.run_id)] == ["first", "second"]


def _write_and_checkpoint_without_waiting(paths: list[Path]) -> None:
    """Another process's writer, then a full checkpoint, on each file: with no busy timeout, a lock
    or a read snapshot held by anyone else fails them at once."""
    for path in paths:
        assert path.is_file(), path  # a probe on a file it creates would prove nothing
        writer = sqlite3.connect(path, timeout=0)
        try:
            writer.execute("CREATE TABLE probe (x)")
            writer.execute("INSERT INTO probe VALUES (1)")
            writer.commit()
            busy, _, _ = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            assert busy == 0, path
        finally:
            writer.close()


def test_a_worker_reaches_each_sqlite_file_through_one_engine(instance) -> None:
    """The run worker's instance (`with_kept_engines`): the same files, written and read as Dagster's
    default storage writes and reads them, but one engine per file however many queries, also for
    the table checks of dynamic partitions and tagged asset events (Dagster's `has_table`)."""
    engines: list[sqlalchemy.Engine] = []  # kept alive: identities stay distinct

    def connected(conn) -> None:
        if not any(e is conn.engine for e in engines):
            engines.append(conn.engine)

    ref = with_kept_engines(instance.get_ref())
    assert ref is not None and ref.storage_data.class_name == "KeptEnginesSqliteStorage"
    with dg.DagsterInstance.from_ref(ref) as worker:
        sqlalchemy.event.listen(sqlalchemy.Engine, "engine_connect", connected)
        try:
            run = _run(worker, "nowhere:1")
            for n in range(5):
                worker.report_engine_event(f"event {n}", run)
                assert worker.get_run_by_id(run.run_id) is not None
            assert [e.message for e in worker.all_logs(run.run_id)] == [f"event {n}" for n in range(5)]
            worker.add_run_tags(run.run_id, {"probe": "yes"})
            for n in range(2):  # asset events: in the shard of runless events (".db") and the index shard
                worker.report_runless_asset_event(dg.AssetMaterialization("probe", tags={"n": str(n)}))
            assert worker.get_latest_materialization_event(dg.AssetKey("probe")) is not None
            worker.add_dynamic_partitions("langs", ["de", "fr"])
            assert worker.has_dynamic_partition("langs", "fr") and not worker.has_dynamic_partition("langs", "it")
        finally:
            sqlalchemy.event.remove(sqlalchemy.Engine, "engine_connect", connected)
    files = sorted(Path(str(e.url.database)).name for e in engines)
    # and the template of a new run's file, made once (by Dagster's own set-up) and copied since
    assert [f for f in files if not f.startswith(".run-shard-")] == sorted(
        ["runs.db", "index.db", f"{run.run_id}.db", ".db"]
    )
    # What the worker wrote is where Dagster's default storage reads it.
    assert [e.message for e in instance.all_logs(run.run_id)] == [f"event {n}" for n in range(5)]
    found = instance.get_run_by_id(run.run_id)
    assert found is not None and found.tags["probe"] == "yes"
    assert len(instance.fetch_materializations(dg.AssetKey("probe"), limit=5).records) == 2
    assert instance.get_dynamic_partitions("langs") == ["de", "fr"]


def test_a_worker_keeps_its_connections_open_between_queries_holding_no_lock(instance) -> None:
    """Pooled connections (issue 27.2): many queries, one or two connections a file, all closed with
    the instance; between queries none holds a lock or a snapshot, so another process's writer and
    a full checkpoint go through at once and the worker's next query reads what was written."""
    opened: list[str] = []
    closed: list[str] = []

    def on_connect(dbapi_conn, record) -> None:
        opened.append(dbapi_conn.execute("PRAGMA database_list").fetchone()[2])

    def on_close(dbapi_conn, record) -> None:
        closed.append(record)

    sqlalchemy.event.listen(sqlalchemy.pool.QueuePool, "connect", on_connect)  # ours: Dagster's are NullPool
    sqlalchemy.event.listen(sqlalchemy.pool.QueuePool, "close", on_close)
    try:
        with dg.DagsterInstance.from_ref(with_kept_engines(instance.get_ref())) as worker:
            run = _run(worker, "nowhere:1")
            for n in range(20):
                worker.report_engine_event(f"event {n}", run)
                assert worker.get_run_by_id(run.run_id) is not None
            per_file = {name: opened.count(name) for name in set(opened)}
            assert per_file and max(per_file.values()) <= 2, per_file  # not one a query (some 60 here)
            _write_and_checkpoint_without_waiting(_files(instance, run.run_id))
            instance.report_engine_event("from another process", run)  # Dagster's own storage writes
            assert worker.all_logs(run.run_id)[-1].message == "from another process"
            assert not closed
        assert len(closed) == len(opened)  # disposed with the instance: nothing left open
    finally:
        sqlalchemy.event.remove(sqlalchemy.pool.QueuePool, "connect", on_connect)
        sqlalchemy.event.remove(sqlalchemy.pool.QueuePool, "close", on_close)


def _head_lookups(monkeypatch) -> list[str]:
    """Calls naming Alembic's head revision (what loads Dagster's migration scripts from disk)."""
    from alembic.script import ScriptDirectory

    calls: list[str] = []
    real = ScriptDirectory.as_revision_number

    def counted(self, id_):
        calls.append(id_)
        return real(self, id_)

    monkeypatch.setattr(ScriptDirectory, "as_revision_number", counted)
    return calls


def test_a_worker_opens_existing_files_without_loading_the_migration_scripts(instance, monkeypatch) -> None:
    run = _run(instance, "nowhere:1")
    instance.report_engine_event("written by Dagster's storage", run)
    calls = _head_lookups(monkeypatch)
    with dg.DagsterInstance.from_ref(with_kept_engines(instance.get_ref())) as worker:
        worker.report_engine_event("written by the worker's", run)
        assert [e.message for e in worker.all_logs(run.run_id)][-2:] == [
            "written by Dagster's storage",
            "written by the worker's",
        ]
    assert calls == []


def test_a_worker_on_files_not_set_up_leaves_their_creation_to_dagster(tmp_path, monkeypatch) -> None:
    """Missing or damaged: Dagster's own set-up runs, and creates the files or says what is wrong."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    missing, damaged = (dg.DagsterInstance.local_temp(str(tmp_path / name)).get_ref() for name in ("a", "b"))
    for path in (tmp_path / "a" / "history" / "runs.db", tmp_path / "a" / "schedules" / "schedules.db"):
        path.unlink()
    calls = _head_lookups(monkeypatch)
    with dg.DagsterInstance.from_ref(with_kept_engines(missing)) as worker:
        run = _run(worker, "nowhere:1")
        worker.report_engine_event("on files the worker's storage created", run)
        assert [e.message for e in worker.all_logs(run.run_id)] == ["on files the worker's storage created"]
    assert calls.count("head") == 3  # runs, schedules and the run's new shard; not the index shard
    (tmp_path / "b" / "history" / "runs.db").write_bytes(b"not a database" * 100)
    with pytest.raises(sqlalchemy.exc.DatabaseError, match="not a database"):
        dg.DagsterInstance.from_ref(with_kept_engines(damaged))


def test_a_worker_keeps_other_storages_as_they_are(instance) -> None:
    ref = instance.get_ref()
    postgres = ref._replace(
        storage_data=ref.storage_data._replace(module_name="dagster_postgres", class_name="DagsterPostgresStorage")
    )
    assert with_kept_engines(postgres) is postgres
    assert with_kept_engines(None) is None
    kept = with_kept_engines(ref)
    assert kept is not None and kept.storage_data.config_yaml == ref.storage_data.config_yaml
    assert kept._replace(storage_data=ref.storage_data) == ref  # nothing else changes
    # A run is launched with Dagster's own names: a worker started afresh needs nothing of ours.
    assert with_dagster_engines(kept) == ref and with_dagster_engines(ref) is ref


def _sqlite_file(path: Path) -> tuple:
    """What Dagster's set-up of a file decides: its schema, its Alembic revision, its journal mode."""
    with closing(sqlite3.connect(path)) as conn:
        schema = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())
        return (
            schema,
            conn.execute("SELECT * FROM alembic_version").fetchall(),
            conn.execute("PRAGMA journal_mode").fetchall(),
        )


def test_a_new_run_s_event_log_file_is_dagster_s_own_made_once_and_copied(tmp_path, monkeypatch) -> None:
    (tmp_path / "dagster").mkdir()
    dagster = dg.DagsterInstance.local_temp(str(tmp_path / "dagster")).event_log_storage  # Dagster's own
    kept = KeptEnginesSqliteEventLogStorage(str(tmp_path / "kept"))
    calls = _head_lookups(monkeypatch)
    for run_id in ("run-1", "run-2", "run-3"):
        for storage in (kept, dagster):
            with storage.run_connection(run_id):
                pass
    assert calls.count("head") == 3 + 1  # Dagster's three shards; ours: the template's, once
    for run_id in ("run-1", "run-2", "run-3"):
        dagster_s = tmp_path / "dagster" / "history" / "runs" / f"{run_id}.db"
        assert _sqlite_file(tmp_path / "kept" / f"{run_id}.db") == _sqlite_file(dagster_s)
    assert sorted(kept.get_all_run_ids()) == ["run-1", "run-2", "run-3"]  # the template is no run's
    assert not [p.name for p in (tmp_path / "kept").iterdir() if p.name.endswith(".tmp")]
    kept.dispose()
    dagster.dispose()


def test_a_run_s_event_log_file_made_meanwhile_by_another_process_is_kept(tmp_path) -> None:
    other = dg.DagsterInstance.local_temp(str(tmp_path)).event_log_storage  # Dagster's own
    runs = tmp_path / "history" / "runs"
    kept = KeptEnginesSqliteEventLogStorage(str(runs))
    with other.run_connection("run-1") as conn:
        conn.execute(sqlalchemy.text("CREATE TABLE written_by_the_other (x)"))
    shard = str(runs / "run-1.db")
    assert kept._place_run_shard(shard) is False
    with closing(sqlite3.connect(shard)) as conn:
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'written_by_the_other'").fetchone()
    assert not [p.name for p in runs.iterdir() if p.name.endswith(".tmp")]
    other.dispose()
    kept.dispose()


@pytest.mark.parametrize(
    "damage", [b"", b"not a database, as a failing disk might leave it" * 100], ids=["empty", "garbage"]
)
def test_a_damaged_run_shard_template_is_made_again_not_copied(tmp_path, damage) -> None:
    (tmp_path / "dagster").mkdir()
    dagster = dg.DagsterInstance.local_temp(str(tmp_path / "dagster")).event_log_storage  # Dagster's own
    kept = KeptEnginesSqliteEventLogStorage(str(tmp_path / "kept"))
    template = Path(kept._run_shard_template())
    template.write_bytes(damage)
    for storage in (kept, dagster):
        with storage.run_connection("run-1"):
            pass
    dagster_s = tmp_path / "dagster" / "history" / "runs" / "run-1.db"
    assert _sqlite_file(tmp_path / "kept" / "run-1.db") == _sqlite_file(dagster_s)
    assert _sqlite_file(template) == _sqlite_file(dagster_s)  # the template itself was made again
    entry = dg.EventLogEntry(
        error_info=None, level=logging.INFO, user_message="logged into the copy", run_id="run-1", timestamp=time.time()
    )
    kept.store_event(entry)  # and the run's file takes its events
    assert [e.message for e in kept.get_logs_for_run("run-1")] == ["logged into the copy"]
    kept.dispose()
    dagster.dispose()
