"""new_edition_sensor against the loopback Fedlex: it compares the catalog with what was built (18.7)."""

from __future__ import annotations

import dagster as dg
import pytest

from chpit_assets.defs.ops.sensors import ACTS_TAG, EDITIONS_TAG, POLL_SECONDS, check_catalog, new_edition_sensor
from chpit_assets.defs.resources import ChpitStore, FedlexSource
from chpit_assets.fedlex.catalog import Catalog
from chpit_assets.fedlex.catalog_diff import Snapshot, SnapshotError, read_built, record_built
from chpit_assets.fedlex.sparql import FedlexFirewallError
from chpit_assets.nightly import NIGHTLY_LANGS
from chpit_assets.orchestration.backfill import covered
from tests.fedlex.conftest import WAF_PAGE, FakeFedlex, Reply

from .conftest import serve


def live(fake: FakeFedlex) -> FedlexSource:
    return FedlexSource(mode="live", sparql_url=fake.endpoint)


def repository() -> dg.RepositoryDefinition:
    from chpit_assets.definitions import defs

    return defs.get_repository_def()


def tick(fake: FakeFedlex, instance: dg.DagsterInstance, cursor: str | None = None) -> dg.SensorResult:
    resources = {"fedlex": live(fake), "chpit": ChpitStore()}
    with dg.build_sensor_context(
        instance=instance, resources=resources, repository_def=repository(), cursor=cursor
    ) as context:
        return new_edition_sensor(context)


def built_from(fake: FakeFedlex, catalog: Catalog, langs=NIGHTLY_LANGS) -> Snapshot:
    """What a successful publication records when Fedlex served `catalog` (hf_dataset, promote_staged)."""
    serve(fake, catalog)
    snapshot = Snapshot.of({lang: live(fake).load_catalog(lang) for lang in langs})
    record_built(ChpitStore().built_catalog_path(live(fake).source_id), snapshot)
    return snapshot


def test_nothing_built_from_the_source_requests_nothing(fake_fedlex: FakeFedlex, before: Catalog):
    with dg.instance_for_test() as instance:
        serve(fake_fedlex, before)
        result = tick(fake_fedlex, instance)
        # Turning the sensor on before any build must not launch a build of everything.
        assert result.run_requests == [] and "nothing built" in result.skip_reason.skip_message
        assert not fake_fedlex.queries  # not even a look at Fedlex


def test_the_first_tick_already_requests_an_edition_that_arrived_since_the_build(
    fake_fedlex: FakeFedlex, before: Catalog, after: Catalog
):
    with dg.instance_for_test() as instance:
        built_from(fake_fedlex, before)
        serve(fake_fedlex, after)
        first = tick(fake_fedlex, instance)
        [request] = first.run_requests
        # One backfill over German alone and everything downstream of it (issue 22.2).
        coverage = covered(request.asset_graph_subset)
        assert coverage["fedlex_catalog"] == ["de"] and {k.split("|")[0] for k in coverage["results"]} == {"de"}
        assert coverage["hf_dataset"] is None
        assert (request.tags[ACTS_TAG], request.tags[EDITIONS_TAG]) == ("cc-2022-491", "cc-2022-491-20250401")
        assert request.tags["chpit/trigger"] == "sensor"
        # Until a publication records the new state, a tick on the same difference requests nothing more.
        again = tick(fake_fedlex, instance, cursor=first.cursor)
        assert again.run_requests == [] and "already requested" in again.skip_reason.skip_message

        built_from(fake_fedlex, after, ["de"])  # the run built and published German
        quiet = tick(fake_fedlex, instance)
        assert quiet.run_requests == [] and quiet.skip_reason.skip_message == "no catalog change since the last build"


def test_check_now_and_the_tick_ask_the_same_question(fake_fedlex: FakeFedlex, before: Catalog, after: Catalog):
    with dg.instance_for_test() as instance:
        built_from(fake_fedlex, before)
        serve(fake_fedlex, after)
        check = check_catalog(live(fake_fedlex), ChpitStore(), repository().asset_graph)
        result = tick(fake_fedlex, instance)
        [request] = result.run_requests
        assert check.key == result.cursor and check.request.tags == request.tags
        assert covered(check.request.asset_graph_subset) == covered(request.asset_graph_subset)
        assert check.summary == "1 change(s) in de" and [c.kind for c in check.changes] == ["new_edition"]


def test_the_record_is_per_source_and_per_language(fake_fedlex: FakeFedlex, before: Catalog, after: Catalog):
    sample, remote = FedlexSource(), live(fake_fedlex)
    assert sample.source_id != remote.source_id
    first = built_from(fake_fedlex, before)
    german = built_from(fake_fedlex, after, ["de"])  # a later run of German only keeps the others' record
    assert german.langs["de"] != first.langs["de"]
    record = read_built(ChpitStore().built_catalog_path(remote.source_id))
    assert record.langs == {**first.langs, "de": german.langs["de"]}
    assert read_built(ChpitStore().built_catalog_path(sample.source_id)).langs == {}
    broken = ChpitStore().built_catalog_path("broken")
    broken.write_text("not a snapshot")
    with pytest.raises(SnapshotError, match=str(broken)):
        read_built(broken)


def test_the_code_location_polls_at_a_configurable_interval():
    from chpit_assets.definitions import defs

    sensor = defs.resolve_sensor_def("new_edition_sensor")
    assert sensor.minimum_interval_seconds == POLL_SECONDS <= 600  # 18.7: minutes, not an hour


def test_a_refused_catalog_fetch_fails_the_tick(fake_fedlex: FakeFedlex, before: Catalog):
    with dg.instance_for_test() as instance:
        built_from(fake_fedlex, before)
        fake_fedlex.sparql_fault = lambda query: Reply(400, WAF_PAGE, {"Content-Type": "text/html"})
        with pytest.raises(FedlexFirewallError):
            tick(fake_fedlex, instance)
        fake_fedlex.sparql_fault = None
        assert tick(fake_fedlex, instance).run_requests == []
