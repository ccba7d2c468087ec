"""The nightly sensor (nightly_build), as the daemon would evaluate it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

from chpit_assets.defs.ops.schedules import NIGHTLY_CRON, ZURICH
from chpit_assets.defs.partitions import BENCH_LANGS

ZH = ZoneInfo(ZURICH)


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    from chpit_assets.definitions import defs

    return defs


def tick(defs: dg.Definitions, at: datetime, cursor: str | None = None) -> dg.SensorResult:
    """The nightly sensor evaluated at `at` (its clock is the wall clock: patched to `at`)."""
    from unittest import mock

    from chpit_assets.defs.ops import schedules

    sensor = defs.resolve_sensor_def("nightly_build")
    with (
        mock.patch.object(schedules, "datetime", wraps=datetime) as clock,
        dg.build_sensor_context(repository_def=defs.get_repository_def(), cursor=cursor) as context,
    ):
        clock.now.return_value = at.astimezone(UTC)
        return sensor.evaluate_tick(context)


def test_a_tick_requests_one_backfill_over_the_configured_languages_and_everything_downstream(defs):
    """18.1/18.6, issue 22.2: one backfill carries every language through to the publication; the
    languages are the configured set, the one `make run` builds by default, and the systems the
    model-free ones (R3)."""
    from chpit_assets.orchestration.backfill import covered
    from chpit_assets.runs.systems import LOOKUP_MODES

    [request] = tick(defs, datetime(2026, 5, 4, 3, 30, tzinfo=ZH)).run_requests
    assert request.requires_backfill_daemon() and request.tags["chpit/trigger"] == "schedule"
    coverage = covered(request.asset_graph_subset)
    assert coverage["fedlex_catalog"] == sorted(BENCH_LANGS) and coverage["search_index"] == sorted(BENCH_LANGS)
    systems = {key.split("|")[1] for key in coverage["results"]}
    assert systems == set(LOOKUP_MODES) and {key.split("|")[0] for key in coverage["results"]} == set(BENCH_LANGS)
    assert coverage["scored_results"] == coverage["results"]
    for unpartitioned in ("build_report", "oracle_gate", "report", "publish_gate", "hf_dataset"):
        assert coverage[unpartitioned] is None
    # Everything of our build; a published release's assets (their own axis) are not part of it.
    every = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert set(coverage) == every - {"release", "release_results"}


def test_once_a_day_from_0330_and_a_missed_night_is_caught_up_once(defs):
    """The cursor is the Zurich day that fired: later ticks that day skip; a daemon down at 03:30 fires
    at its first tick after, once."""
    before = tick(defs, datetime(2026, 5, 4, 3, 29, tzinfo=ZH), cursor="2026-05-03")
    assert before.run_requests == [] and "03:30" in (before.skip_message or "")
    fired = tick(defs, datetime(2026, 5, 4, 3, 30, 40, tzinfo=ZH), cursor="2026-05-03")
    assert len(fired.run_requests or []) == 1 and fired.cursor == "2026-05-04"
    assert tick(defs, datetime(2026, 5, 4, 23, 59, tzinfo=ZH), cursor=fired.cursor).run_requests == []
    late = tick(defs, datetime(2026, 5, 6, 11, 0, tzinfo=ZH), cursor=fired.cursor)  # down on the 5th
    assert len(late.run_requests or []) == 1 and late.cursor == "2026-05-06"


def test_the_nightly_never_covers_a_model_system(defs):
    """R3: the schedule's and the sensor's target refuses a model system, whoever asks for it."""
    from chpit_assets.orchestration.request import ModelSystemInNightly, nightly_target

    with pytest.raises(ModelSystemInNightly, match="never starts a model system"):
        nightly_target(defs.resolve_asset_graph(), ["de"], ["oracle", "gpt/closed"])


def test_every_job_and_sensor_has_a_description_and_every_asset_an_owner(defs):
    """14.6: what the UI shows for each definition."""
    repo = defs.get_repository_def()
    undescribed = [j.name for j in repo.get_all_jobs() if not j.name.startswith("__") and not j.description]
    undescribed += [s.name for s in [*repo.sensor_defs, *repo.schedule_defs] if not s.description]
    assert undescribed == []
    unowned = [s.key.to_user_string() for a in defs.resolve_asset_graph().assets_defs for s in a.specs if not s.owners]
    assert unowned == []


@pytest.mark.parametrize("first_day", ["2026-03-27", "2026-10-23"])  # around the spring and autumn DST switches
def test_exactly_one_nightly_a_day_at_0330_zurich_across_dst(first_day):
    """The nightly fires at 03:30 in Zurich's own time zone, a wall time that exists exactly once on
    every day, the two switch days included; 02:30 would not exist in March and exist twice in October."""
    from chpit_assets.defs.ops.schedules import NIGHTLY_AT, night_due

    assert (NIGHTLY_AT.hour, NIGHTLY_AT.minute, NIGHTLY_CRON) == (3, 30, "30 3 * * *")
    start = datetime.fromisoformat(first_day).replace(tzinfo=ZH).astimezone(UTC)
    fired: list[tuple[date, str]] = []
    cursor = (date.fromisoformat(first_day) - timedelta(days=1)).isoformat()
    for minute in range(6 * 24 * 60):  # a tick a minute for six days
        now = start + timedelta(minutes=minute)
        day = night_due(now, cursor)
        if day is not None:
            fired.append((day, now.astimezone(ZH).strftime("%H:%M")))
            cursor = day.isoformat()
    days = [date.fromisoformat(first_day) + timedelta(days=n) for n in range(6)]
    assert fired == [(day, "03:30") for day in days]

    def occurrences(day: date, hour: int) -> int:
        """How many instants show `hour`:30 on `day` in Zurich (0 in a gap, 2 in a repeated hour)."""
        first = datetime(day.year, day.month, day.day, tzinfo=ZH).astimezone(UTC)
        instants = (first + timedelta(minutes=m) for m in range(0, 26 * 60))
        return sum(
            1
            for t in instants
            if (t.astimezone(ZH).date(), t.astimezone(ZH).strftime("%H:%M")) == (day, f"{hour:02d}:30")
        )

    assert sorted({occurrences(day, 2) for day in days}) == ([0, 1] if first_day.endswith("03-27") else [1, 2])
