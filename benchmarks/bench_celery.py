"""Issue 22.4: the speed-up of 2 Celery workers over 1 on one benchmark backfill's (system, lang) runs.

A loopback OpenAI-compatible endpoint answers every chat request after 1 s. The German sample is
built once (in-process); then, for 1 and for 2 workers, a copy of that build runs four model systems
(`bench/closed`, `bench/current`, `bench/pit`, `bench/pit+verify`: 4 partitions x 9 items, one request
each) as one `python -m chpit_assets run --executor celery` backfill, with the instance on a fresh
PostgreSQL database and the machine's RabbitMQ. Reported: the whole command's wall time and the
systems phase (first `results` run start to last `results` run end, read from the instance).

    .venv/bin/python benchmarks/bench_celery.py          # needs PostgreSQL and RabbitMQ on 127.0.0.1
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import psycopg2

ROOT = Path(__file__).resolve().parents[1]
PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/"
AMQP = "pyamqp://guest:guest@127.0.0.1:5672//"
SYSTEMS = ("bench/closed", "bench/current", "bench/pit", "bench/pit+verify")
DELAY_S = 1.0


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

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(DELAY_S)
        message = {"role": "assistant", "content": "1 Ein Text."}
        self._send(
            {
                "id": "x",
                "model": "bench-model",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
        )


def database() -> str:
    name = f"chpit_bench_{uuid.uuid4().hex[:10]}"
    con = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    con.autocommit = True
    con.cursor().execute(f'CREATE DATABASE "{name}"')
    con.close()
    return PG + name


def env_for(work: Path, pg_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER", "CHPIT_"))}
    return dict(env, DAGSTER_HOME=str(work / "home"), CHPIT_DATA_DIR=str(work / "data"), CHPIT_PG_URL=pg_url)


def set_up(work: Path) -> None:
    (work / "home").mkdir(parents=True)
    text = (ROOT / "dagster.yaml").read_text() + "\n" + (ROOT / "dagster.postgres.yaml").read_text()
    (work / "home" / "dagster.yaml").write_text(text)


def cli(env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "chpit_assets", "run", "--langs", "de", *args], env=env, cwd=ROOT, check=True)
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
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowEndpoint)
    Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1"
    base = Path(tempfile.mkdtemp(prefix="bench-celery-"))
    built = base / "built"
    set_up(built)
    pg_built = database()
    cli(env_for(built, pg_built), "--systems", "oracle")
    figures = {}
    for count in (1, 2):
        work = base / f"w{count}"
        set_up(work)
        shutil.copytree(built / "data", work / "data")
        pg_url = database()
        env = env_for(work, pg_url)
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        procs = workers(env, queue, count, work / "celery")
        try:
            wall = cli(
                env,
                *("--systems", ",".join(SYSTEMS), "--model-slug", "bench", "--base-url", endpoint),
                *("--executor", "celery", "--celery-broker", AMQP, "--celery-queue", queue),
            )
        finally:
            for proc in procs:
                os.killpg(proc.pid, signal.SIGQUIT)
                proc.wait(timeout=30)
        figures[count] = {"wall_s": round(wall, 1), "systems_phase_s": round(systems_phase(pg_url), 1)}
    server.shutdown()
    shutil.rmtree(base, ignore_errors=True)
    ratio = figures[1]["systems_phase_s"] / figures[2]["systems_phase_s"]
    print(
        json.dumps(
            {
                "date": datetime.now(UTC).strftime("%Y-%m-%d"),
                "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                "requests": len(SYSTEMS) * 9,
                "delay_s": DELAY_S,
                "workers": figures,
                "speedup_systems_phase": round(ratio, 2),
                "speedup_wall": round(figures[1]["wall_s"] / figures[2]["wall_s"], 2),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
