"""Issue 22.4: the speed-up of 2 Celery workers over 1 on one benchmark backfill's (system, lang) runs.

A loopback OpenAI-compatible endpoint answers every chat request after 1 s. The German sample is
built once (in-process); then, for 1 and for 2 workers, a copy of that build runs four model systems
(`bench/closed`, `bench/current`, `bench/pit`, `bench/pit+verify`: 4 partitions x 9 items, one request
each) as one `python -m chpit_assets run --executor celery` backfill, with the instance on a fresh
PostgreSQL database and the machine's RabbitMQ. Reported: the whole command's wall time and the
systems phase (first `results` run start to last `results` run end, read from the instance).

    .venv/bin/python benchmarks/bench_celery.py [--write docs/benchmarks.md]   # needs PostgreSQL and RabbitMQ
    .venv/bin/python benchmarks/bench_celery.py --smoke DIR   # 1 worker, 1 system, 2 items, files under DIR
        (one backfill that builds too: the smoke checks the path, its systems phase is no figure to keep)

The databases it creates (one per phase) are dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import psycopg2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, machine, record  # noqa: E402

PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/"
AMQP = "pyamqp://guest:guest@127.0.0.1:5672//"
SYSTEMS = ("bench/closed", "bench/current", "bench/pit", "bench/pit+verify")
DELAY_S = 1.0
SMOKE_DELAY_S = 0.05


class SlowEndpoint(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": "bench-model"}]})

    delay_s = DELAY_S

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.delay_s)
        message = {"role": "assistant", "content": "1 Ein Text."}
        self._send(
            {
                "id": "x",
                "model": "bench-model",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
        )


def admin(statement: str) -> None:
    con = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    con.autocommit = True
    con.cursor().execute(statement)
    con.close()


def database() -> str:
    name = f"chpit_bench_{uuid.uuid4().hex[:10]}"
    admin(f'CREATE DATABASE "{name}"')
    return PG + name


def drop(pg_url: str) -> None:
    admin(f'DROP DATABASE IF EXISTS "{pg_url.removeprefix(PG)}" WITH (FORCE)')


def env_for(work: Path, pg_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER", "CHPIT_"))}
    return dict(env, DAGSTER_HOME=str(work / "home"), CHPIT_DATA_DIR=str(work / "data"), CHPIT_PG_URL=pg_url)


def set_up(work: Path) -> None:
    (work / "home").mkdir(parents=True)
    text = (ROOT / "dagster.yaml").read_text() + "\n" + (ROOT / "dagster.postgres.yaml").read_text()
    (work / "home" / "dagster.yaml").write_text(text)


def cli(env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    command = [sys.executable, "-m", "chpit_assets", "run", "--langs", "de", *args]
    # Its progress goes to stderr: stdout's last line is the figures (benchmarks/common.py).
    subprocess.run(command, env=env, cwd=ROOT, check=True, stdout=sys.stderr)
    return time.perf_counter() - started


def workers(env: dict[str, str], queue: str, count: int, folder: Path) -> list[subprocess.Popen]:
    folder.mkdir()
    (folder / "dagster_celery_config.py").write_text(
        f"broker_url = {AMQP!r}\nresult_backend = 'rpc://'\ntask_acks_late = True\n"
    )
    started = []
    for n in range(count):
        args = [sys.executable, "-m", "celery", "-A", "dagster_celery.app", "worker", "-Q", queue]
        args += ["-n", f"w{n}-{queue}@%h", "--pool", "solo", "--prefetch-multiplier", "1", "-l", "WARNING"]
        started.append(subprocess.Popen(args, env=dict(env, PYTHONPATH=str(folder)), start_new_session=True))
    time.sleep(8)  # the workers connect to the broker
    return started


def systems_phase(pg_url: str) -> float:
    con = psycopg2.connect(pg_url.replace("postgresql+psycopg2://", "postgresql://"))
    rows = con.cursor()
    rows.execute(
        "SELECT min(r.start_time), max(r.end_time) FROM runs r JOIN run_tags t ON t.run_id = r.run_id "
        "WHERE t.key = 'dagster/partition' AND t.value LIKE 'de|bench/%'"
    )
    start, end = rows.fetchone()
    con.close()
    return float(end - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="1 worker, 1 system, 2 items, files under DIR")
    args = parser.parse_args()
    counts: tuple[int, ...] = (1, 2)
    systems: tuple[str, ...] = SYSTEMS
    limit: list[str] = []
    if args.smoke:
        counts, systems, limit = (1,), SYSTEMS[:1], ["--limit", "2"]
        SlowEndpoint.delay_s = SMOKE_DELAY_S
        args.smoke.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowEndpoint)
    Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1"
    base = Path(tempfile.mkdtemp(prefix="bench-celery-", dir=args.smoke))
    built = base / "built"
    databases: list[str] = []
    try:
        if not args.smoke:  # the smoke's one run builds for itself: one backfill instead of two
            set_up(built)
            databases.append(database())
            cli(env_for(built, databases[0]), "--systems", "oracle")
        figures = {}
        for count in counts:
            work = base / f"w{count}"
            set_up(work)
            if built.exists():
                shutil.copytree(built / "data", work / "data")
            databases.append(database())
            env = env_for(work, databases[-1])
            queue = f"bench-{uuid.uuid4().hex[:8]}"
            procs = workers(env, queue, count, work / "celery")
            try:
                wall = cli(
                    env,
                    *("--systems", ",".join(systems), "--model-slug", "bench", "--base-url", endpoint, *limit),
                    *("--executor", "celery", "--celery-broker", AMQP, "--celery-queue", queue),
                )
            finally:
                for proc in procs:
                    os.killpg(proc.pid, signal.SIGQUIT)
                    proc.wait(timeout=30)
            figures[str(count)] = {"wall_s": round(wall, 1), "systems_phase_s": round(systems_phase(databases[-1]), 1)}
    finally:
        server.shutdown()
        for pg_url in databases:
            drop(pg_url)
        shutil.rmtree(base, ignore_errors=True)
    result: dict = {"systems": len(systems), "delay_s": SlowEndpoint.delay_s, "workers": figures}
    if "2" in figures:
        one, two = figures["1"], figures["2"]
        result["speedup_systems_phase"] = round(one["systems_phase_s"] / two["systems_phase_s"], 2)
        result["speedup_wall"] = round(one["wall_s"] / two["wall_s"], 2)
    body = "\n".join(
        [
            f"{len(systems)} model systems over the German sample's items{' (the first 2)' if limit else ''}, "
            f"{SlowEndpoint.delay_s} s per request, "
            "one `run --executor celery` backfill per worker count (issue 22.4).\n",
            "| workers | whole command s | systems phase s |\n|---|---|---|",
            *(f"| {n} | {f['wall_s']} | {f['systems_phase_s']} |" for n, f in figures.items()),
        ]
        + (
            [
                f"\n2 workers over 1: systems phase {result['speedup_systems_phase']}x, "
                f"whole command {result['speedup_wall']}x."
            ]
            if "2" in figures
            else []
        )
    )
    print(machine())
    print(body)
    if args.write:
        record(args.write, "Celery: 2 workers over 1", body)
    emit("bench_celery", result)


if __name__ == "__main__":
    main()
