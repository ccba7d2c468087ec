"""nightly_build and build_report's automation, as the daemon would evaluate them."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

# The daemon's own cron iterator: the DST behaviour under test is Dagster's, applied to our cron string.
from dagster._utils.schedules import cron_string_iterator

from chpit_assets.defs.ops.schedules import NIGHTLY_CRON, ZURICH
from chpit_assets.fedlex.catalog import LANGS

ZH = ZoneInfo(ZURICH)


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    from chpit_assets.definitions import defs

    return defs


def test_a_tick_requests_every_language_partition_of_the_build_job(defs):
    schedule = defs.resolve_schedule_def("nightly_build")
    assert (schedule.cron_schedule, schedule.execution_timezone, schedule.job_name) == ("30 3 * * *", ZURICH, "build")
    context = dg.build_schedule_context(
        scheduled_execution_time=datetime(2026, 5, 4, 3, 30, tzinfo=ZH), repository_def=defs.get_repository_def()
    )
    requests = schedule.evaluate_tick(context).run_requests
    assert [r.partition_key for r in requests] == list(LANGS)
    assert all(r.tags["chpit/trigger"] == "nightly" and r.tags["dagster/partition"] == r.partition_key for r in requests)
    job = defs.resolve_job_def("build")
    for r in requests:
        assert r.partition_key in job.partitions_def.get_partition_keys()
        assert dg.validate_run_config(job, r.run_config) is not None


@pytest.mark.parametrize("first_day", ["2026-03-27", "2026-10-23"])   # around the spring and autumn DST switches
def test_exactly_one_tick_a_night_at_0330_zurich_across_dst(first_day):
    start = datetime.fromisoformat(first_day).replace(tzinfo=ZH).timestamp()
    ticks = [t for _, t in zip(range(6), cron_string_iterator(start, NIGHTLY_CRON, ZURICH))]
    assert [t.astimezone(ZH).strftime("%H:%M") for t in ticks] == ["03:30"] * 6
    assert len({t.astimezone(ZH).date() for t in ticks}) == 6
    assert len({t.utcoffset() for t in ticks}) == 2   # the switch really is inside the window


def _core_split(instance: dg.DagsterInstance, lang: str, version: str) -> None:
    instance.report_runless_asset_event(
        dg.AssetMaterialization("core_split", partition=lang, tags={"dagster/data_version": version})
    )


def test_build_report_follows_a_changed_core_split_and_ignores_an_unchanged_rebuild(defs):
    selection = dg.AssetSelection.assets("build_report")
    with dg.instance_for_test() as instance:
        result = dg.evaluate_automation_conditions(defs, instance, asset_selection=selection)
        assert result.total_requested == 0

        _core_split(instance, "de", "v1")
        result = dg.evaluate_automation_conditions(defs, instance, asset_selection=selection, cursor=result.cursor)
        assert result.total_requested == 1

        result = dg.evaluate_automation_conditions(defs, instance, asset_selection=selection, cursor=result.cursor)
        assert result.total_requested == 0   # requested once, not on every tick after

        _core_split(instance, "de", "v1")    # a nightly rebuild that changed nothing
        result = dg.evaluate_automation_conditions(defs, instance, asset_selection=selection, cursor=result.cursor)
        assert result.total_requested == 0

        _core_split(instance, "fr", "v7")
        result = dg.evaluate_automation_conditions(defs, instance, asset_selection=selection, cursor=result.cursor)
        assert result.total_requested == 1


def test_the_automation_sensor_covers_build_report(defs):
    sensor = defs.resolve_sensor_def("chpit_automation")
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    graph = defs.resolve_asset_graph()
    assert dg.AssetKey("build_report") in sensor.asset_selection.resolve(graph)
