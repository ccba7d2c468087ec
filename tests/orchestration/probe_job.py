"""A job a forked run worker can load by its origin (tests/orchestration/test_launcher.py): it
writes which process ran it and with which environment."""

import os
from pathlib import Path

import dagster as dg

OUT_ENV = "CHPIT_PROBE_OUT"
VALUE_ENV = "CHPIT_PROBE_VALUE"


@dg.op
def report_worker(context: dg.OpExecutionContext) -> None:
    seen = f"{os.getpid()} {os.environ.get(VALUE_ENV, '')}"
    (Path(os.environ[OUT_ENV]) / context.run_id).write_text(seen, encoding="utf-8")


@dg.job(executor_def=dg.in_process_executor)  # the op runs in the run worker itself
def probe() -> None:
    report_worker()
