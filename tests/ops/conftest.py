"""Fixtures for the operations tests: the machine's PostgreSQL and RabbitMQ, a fresh DAGSTER_HOME
with the repository's dagster.yaml, and subprocesses that are always stopped.

The services are real (nothing is mocked). Off CI a missing service or package skips its tests;
under CI (CI=true) it fails them: .ci/run starts every service, pyproject.toml installs every package.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psycopg2
import pytest

from chpit_assets.instance import PG_SCHEME, install_instance_file

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


def require_package(module: str, requirement: str) -> None:
    """Skip (locally) or fail (CI) when a Python package the test needs is not installed."""
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed; pyproject.toml must require {requirement}"
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
        yield f"{PG_SCHEME}{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def pg_rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of a query run straight on PostgreSQL, bypassing Dagster."""
    con = psycopg2.connect(url.replace(PG_SCHEME, "postgresql://"))  # libpq takes no SQLAlchemy driver name
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
def postgres_home(dagster_home: Path) -> Path:
    """The same home set up for PostgreSQL, as `make INSTANCE=postgres` lays it out."""
    install_instance_file(dagster_home, postgres=True)
    return dagster_home


@pytest.fixture
def base_env(dagster_home: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of every process in a test: one instance, one data folder, no PostgreSQL unless added."""
    env = {k: v for k, v in os.environ.items() if k != "CHPIT_PG_URL"}
    env.update(DAGSTER_HOME=str(dagster_home), CHPIT_DATA_DIR=str(tmp_path / "data"), PYTHONUNBUFFERED="1")
    return env


@dataclass
class Proc:
    """A started subprocess, the file its output goes to, and the signal that ends it."""

    popen: subprocess.Popen
    log: Path
    stop_signal: signal.Signals

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ok(self, timeout: float) -> None:
        """Wait for a zero exit; fail the test with the process's output otherwise."""
        try:
            code = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.popen.args} did not finish in {timeout}s:\n{self.output()[-4000:]}")
        assert code == 0, f"{self.popen.args} exited {code}:\n{self.output()[-4000:]}"


class Spawn(Protocol):
    def __call__(
        self,
        args: list[str],
        env: dict[str, str],
        name: str,
        stop_signal: signal.Signals = signal.SIGTERM,
        cwd: Path = ROOT,
    ) -> Proc: ...


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start a command in its own process group, output to a log file; every group is stopped at teardown."""
    started: list[Proc] = []

    def _spawn(
        args: list[str], env: dict[str, str], name: str, stop_signal: signal.Signals = signal.SIGTERM, cwd: Path = ROOT
    ) -> Proc:
        log = tmp_path / f"{name}.log"
        with open(log, "wb") as out:  # the child keeps its own descriptor
            popen = subprocess.Popen(
                args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        started.append(Proc(popen, log, stop_signal))
        return started[-1]

    yield _spawn
    # Signal every group first and then wait, so the shutdowns overlap.
    for proc in started:
        _signal_group(proc.popen, proc.stop_signal)
    for proc in started:
        try:
            proc.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        # Whatever is left in the group (a straggling child, or a leader that ignored the signal).
        _signal_group(proc.popen, signal.SIGKILL)
        proc.popen.wait(timeout=15)


def set_up_instance(spawn: Spawn, env: dict[str, str]) -> None:
    """`python -m chpit_assets.instance`, as `make dev` and `make daemon` run it before anything else:
    the writer pool's limit and the published languages' partitions are recorded on the instance."""
    spawn([sys.executable, "-m", "chpit_assets.instance"], env, "instance-set-up").wait_ok(timeout=120)


def _signal_group(popen: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(popen.pid, sig)
    except ProcessLookupError:
        pass
