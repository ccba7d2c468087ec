"""Issue 23.8: progress during long steps. Each step logs `progress: done/total what` at a bounded
rate (the Dagster UI shows the lines in the run's logs); the CLI's driver reads them from the event
log while it polls and draws them as bars on a terminal."""

from __future__ import annotations

import io
import time
import uuid
from pathlib import Path

import dagster as dg

from chpit_assets.corpus.ingest import store_editions
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.fedlex.download import download_editions
from chpit_assets.orchestration.invocation import Bars, ProgressWatch
from chpit_assets.orchestration.stages import Progress, ProgressLog, progress_since

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_progress_line_reads_back_as_what_was_written_and_nothing_else_does():
    line = Progress("editions parsed", 1200, 4013).message()
    assert line == "progress: 1,200/4,013 editions parsed"
    assert Progress.of(line) == Progress("editions parsed", 1200, 4013)
    for other in ("oracle [de]: 1.0 of 9", "progress: 3 of 5 answered", "a progress: 1/2 x", ""):
        assert Progress.of(other) is None


def test_the_log_is_written_at_most_once_a_second_and_always_at_the_start_and_the_end():
    clock, written = Clock(), []
    log = ProgressLog(written.append, "answered", clock=clock)
    for done in range(0, 11):  # 11 counts, 0.3 s apart: 3.0 s in all
        log(done, 10)
        clock.now += 0.3
    counts = [Progress.of(line).done for line in written]
    assert counts[0] == 0 and counts[-1] == 10
    assert counts == [0, 4, 8, 10]  # 0 s, 1.2 s, 2.4 s, then the end


def test_download_and_parse_report_each_edition(tmp_path):
    catalog = load_sample_catalog(SAMPLE).for_lang("de")
    fetched_counts: list[tuple[int, int]] = []
    fetched = download_editions(catalog, tmp_path / "cache", progress=lambda d, t: fetched_counts.append((d, t)))
    real = sum(1 for f in fetched if f.stage == "downloaded")
    assert real > 2 and fetched_counts == [(n, real) for n in range(real + 1)]
    again: list = []
    download_editions(catalog, tmp_path / "cache", progress=lambda d, t: again.append((d, t)))
    assert again == []  # all cached: nothing fetched, nothing to report
    parsed: list[tuple[int, int]] = []
    report = store_editions(
        Store(tmp_path / "chpit.duckdb"), catalog, "de", fetched, progress=lambda d, t: parsed.append((d, t))
    )
    assert report.reparsed == real and parsed == [(n, real) for n in range(real + 1)]


def test_a_run_logs_its_answers_and_the_driver_reads_them_from_the_event_log():
    """A real run (in process) logs through ProgressLog; what `progress_since` reads back are its
    counts, and a second read from the cursor finds nothing new."""

    @dg.asset
    def answering(context) -> None:  # (a string annotation is refused by Dagster)
        progress = ProgressLog(context.log.info, "answered", every=0.0)
        context.log.info("not a progress line")
        for done in range(4):
            progress(done, 3)

    with dg.instance_for_test() as instance:
        result = dg.materialize([answering], instance=instance)
        lines, cursor = progress_since(instance, result.run_id)
        assert lines == [Progress("answered", n, 3) for n in range(4)]
        assert progress_since(instance, result.run_id, cursor) == ([], cursor)


def _running(instance: dg.DagsterInstance, backfill_id: str, partition: str) -> dg.DagsterRun:
    run = dg.DagsterRun(
        job_name="__ASSET_JOB",
        run_id=str(uuid.uuid4()),
        status=dg.DagsterRunStatus.STARTED,
        tags={"dagster/backfill": backfill_id, "dagster/partition": partition},
        asset_selection=frozenset({dg.AssetKey("results")}),
    )
    instance.add_run(run)
    return run


def _log(instance: dg.DagsterInstance, run: dg.DagsterRun, message: str) -> None:
    instance.handle_new_event(
        dg.EventLogEntry(error_info=None, level=20, user_message=message, run_id=run.run_id, timestamp=time.time())
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_driver_draws_a_bar_per_running_step_and_lifts_it_for_stage_lines():
    with dg.instance_for_test() as instance:
        run = _running(instance, "b1", "de|echo/closed")
        other = _running(instance, "b2", "de|oracle")  # another backfill's: never drawn
        terminal = Terminal()
        bars = Bars(terminal)
        watch = ProgressWatch(instance, "b1", bars)
        _log(instance, run, Progress("answered", 0, 5).message())
        _log(instance, run, Progress("answered", 2, 5).message())
        _log(instance, other, Progress("answered", 1, 9).message())
        watch.poll()
        drawn = terminal.getvalue()
        assert "echo/closed [de]: answered" in drawn and "2/5" in drawn and "/9" not in drawn
        _log(instance, run, Progress("answered", 4, 5).message())
        watch.poll()
        assert "4/5" in terminal.getvalue()
        printed: list[str] = []
        bars.write(printed.append, "oracle [de]: ok (run x)")
        assert printed == ["oracle [de]: ok (run x)"]
        instance.report_run_canceled(run)  # the run ends: its bar goes
        watch.poll()
        assert not bars._bars
        watch.poll()  # an ended run is not read again
        bars.close()
