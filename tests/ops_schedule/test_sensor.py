"""new_edition_sensor against the loopback Fedlex: a baseline tick, one new edition, then quiet."""

from __future__ import annotations

import dagster as dg
import pytest

from chpit_assets.defs.ops.sensors import ACTS_TAG, EDITIONS_TAG, POLL_SECONDS, new_edition_sensor
from chpit_assets.defs.resources import FedlexSource
from chpit_assets.fedlex.catalog import Catalog
from chpit_assets.nightly import NIGHTLY_LANGS
from chpit_assets.fedlex.catalog_diff import Snapshot
from chpit_assets.fedlex.sparql import FedlexFirewallError
from tests.fedlex.conftest import WAF_PAGE, FakeFedlex, Reply

from .conftest import serve


def tick(fake: FakeFedlex, instance: dg.DagsterInstance, cursor: str | None) -> dg.SensorResult:
    context = dg.build_sensor_context(
        cursor=cursor, instance=instance,
        resources={"fedlex": FedlexSource(mode="live", sparql_url=fake.endpoint)},
    )
    return new_edition_sensor(context)


def test_second_tick_requests_exactly_the_new_edition_and_a_quiet_third_requests_nothing(
    fake_fedlex: FakeFedlex, before: Catalog, after: Catalog
):
    with dg.instance_for_test() as instance:
        serve(fake_fedlex, before)
        first = tick(fake_fedlex, instance, None)
        # Baseline only: turning the sensor on must not launch a build of everything.
        assert first.run_requests == [] and "first tick" in first.skip_reason.skip_message
        # Only the languages a nightly builds are polled (18.6): a change in en or rm starts nothing.
        pairs = sum(len(before.for_lang(lang).acts) for lang in NIGHTLY_LANGS)
        assert Snapshot.decode(first.cursor).pairs() == pairs > 0

        serve(fake_fedlex, after)
        second = tick(fake_fedlex, instance, first.cursor)
        [request] = second.run_requests
        assert request.run_config["ops"]["rebuild"]["config"]["langs"] == ["de"]
        assert request.job_name is None  # the sensor's own target: the nightly job
        assert (request.tags[ACTS_TAG], request.tags[EDITIONS_TAG]) == ("cc-2022-491", "cc-2022-491-20250401")
        assert request.tags["chpit/trigger"] == "new_edition"

        third = tick(fake_fedlex, instance, second.cursor)
        assert third.run_requests == [] and third.skip_reason.skip_message == "no catalog change"
        assert third.cursor == second.cursor


def test_the_code_location_points_the_sensor_at_the_nightly_job_at_a_configurable_interval():
    from chpit_assets.definitions import defs

    sensor = defs.resolve_sensor_def("new_edition_sensor")
    assert sensor.job_name == "nightly"
    assert sensor.minimum_interval_seconds == POLL_SECONDS <= 600  # 18.7: minutes, not an hour


def test_a_refused_catalog_fetch_fails_the_tick_and_keeps_the_cursor(fake_fedlex: FakeFedlex, before: Catalog):
    with dg.instance_for_test() as instance:
        serve(fake_fedlex, before)
        cursor = tick(fake_fedlex, instance, None).cursor
        fake_fedlex.sparql_fault = lambda query: Reply(400, WAF_PAGE, {"Content-Type": "text/html"})
        with pytest.raises(FedlexFirewallError):
            tick(fake_fedlex, instance, cursor)
        # The daemon keeps the old cursor when a tick raises; the next good tick compares against it.
        fake_fedlex.sparql_fault = None
        assert tick(fake_fedlex, instance, cursor).run_requests == []
