"""Fixtures for the operations tests: the machine's PostgreSQL and RabbitMQ, a fresh DAGSTER_HOME
with the repository's dagster.yaml, and subprocesses that are always stopped.

The services are real (nothing is mocked). Off CI a missing service skips its tests; under
CI (CI=true) it fails them, because .ci/run is responsible for starting every service.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg2
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "fedlex-sample"
PG_HOST, PG_PORT, PG_USER, PG_ADMIN_DB = "127.0.0.1", 5432, "postgres", "test"
AMQP_HOST, AMQP_PORT = "127.0.0.1", 5672
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_service(name: str, host: str, port: int) -> None:
    """Skip (locally) or fail (CI) when nothing answers on host:port."""
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError as exc:
        message = f"{name} is not reachable on {host}:{port} ({exc}); .ci/run starts it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL to a database created for this test alone (dropped afterwards, connections and all)."""
    require_service("PostgreSQL", PG_HOST, PG_PORT)
    name = f"chpit_ops_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=PG_ADMIN_DB)
    admin.autocommit = True  # CREATE/DROP DATABASE cannot run inside a transaction
    try:
        with admin.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        yield f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def pg_rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of a query run straight on PostgreSQL, bypassing Dagster."""
    con = psycopg2.connect(url)
    try:
        with con.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    finally:
        con.close()


@pytest.fixture
def amqp_url() -> str:
    require_service("RabbitMQ", AMQP_HOST, AMQP_PORT)
    return f"pyamqp://guest:guest@{AMQP_HOST}:{AMQP_PORT}//"


@pytest.fixture
def dagster_home(tmp_path: Path) -> Path:
    """A DAGSTER_HOME holding the repository's dagster.yaml, as `make` lays it out."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


@pytest.fixture
def base_env(dagster_home: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of every process in a test: one instance, one data folder, no PostgreSQL unless added."""
    env = {k: v for k, v in os.environ.items() if k != "CHPIT_PG_URL"}
    env.update(DAGSTER_HOME=str(dagster_home), CHPIT_DATA_DIR=str(tmp_path / "data"), PYTHONUNBUFFERED="1")
    return env


@dataclass
class Proc:
    """A started subprocess and the file its output goes to."""

    popen: subprocess.Popen
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ok(self, timeout: float) -> None:
        """Wait for a zero exit; fail the test with the process's output otherwise."""
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.popen.args} did not finish in {timeout}s:\n{self.output()[-4000:]}")
        assert code == 0, f"{self.popen.args} exited {code}:\n{self.output()[-4000:]}"


Spawn = Callable[[list[str], dict[str, str], str], Proc]


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start a command in its own process group, output to a log file; every group is stopped at teardown."""
    started: list[Proc] = []

    def _spawn(args: list[str], env: dict[str, str], name: str) -> Proc:
        log = tmp_path / f"{name}.log"
        with open(log, "wb") as out:  # the child keeps its own descriptor
            popen = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        started.append(Proc(popen, log))
        return started[-1]

    yield _spawn
    for proc in started:
        _stop(proc.popen)


def _stop(popen: subprocess.Popen) -> None:
    """SIGTERM the whole group (Celery's children too), SIGKILL it if it lingers."""
    if popen.poll() is None:
        _signal_group(popen, signal.SIGTERM)
        try:
            popen.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            pass
    # The leader may be gone while a child still holds the group.
    _signal_group(popen, signal.SIGKILL)
    popen.wait(timeout=15)


def _signal_group(popen: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(popen.pid, sig)
    except ProcessLookupError:
        pass
