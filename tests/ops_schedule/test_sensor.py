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
from tests.fedlex.conftest import WAF_PAGE, FakeFedlex, Reply

from .conftest import serve


def live(fake: FakeFedlex) -> FedlexSource:
    return FedlexSource(mode="live", sparql_url=fake.endpoint)


def tick(fake: FakeFedlex, instance: dg.DagsterInstance) -> dg.SensorResult:
    with dg.build_sensor_context(instance=instance, resources={"fedlex": live(fake), "chpit": ChpitStore()}) as context:
        return new_edition_sensor(context)


def built_from(fake: FakeFedlex, catalog: Catalog, langs=NIGHTLY_LANGS) -> Snapshot:
    """What a successful pipeline run records when Fedlex served `catalog` (chpit_assets.pipeline.run_pipeline)."""
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
        [request] = tick(fake_fedlex, instance).run_requests
        assert request.run_config["ops"]["rebuild"]["config"]["langs"] == ["de"]
        assert request.job_name is None  # the sensor's own target: the nightly job
        assert (request.tags[ACTS_TAG], request.tags[EDITIONS_TAG]) == ("cc-2022-491", "cc-2022-491-20250401")
        assert request.tags["chpit/trigger"] == "new_edition"
        # Until a run records the new state, every tick asks for the same run (Dagster launches a key once).
        assert tick(fake_fedlex, instance).run_requests[0].run_key == request.run_key

        built_from(fake_fedlex, after, ["de"])  # the run built and published German
        quiet = tick(fake_fedlex, instance)
        assert quiet.run_requests == [] and quiet.skip_reason.skip_message == "no catalog change since the last build"


def test_check_now_and_the_tick_ask_the_same_question(fake_fedlex: FakeFedlex, before: Catalog, after: Catalog):
    with dg.instance_for_test() as instance:
        built_from(fake_fedlex, before)
        serve(fake_fedlex, after)
        check = check_catalog(live(fake_fedlex), ChpitStore())
        [request] = tick(fake_fedlex, instance).run_requests
        assert check.request.run_key == request.run_key and check.request.tags == request.tags
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


def test_the_code_location_points_the_sensor_at_the_nightly_job_at_a_configurable_interval():
    from chpit_assets.definitions import defs

    sensor = defs.resolve_sensor_def("new_edition_sensor")
    assert sensor.job_name == "nightly"
    assert sensor.minimum_interval_seconds == POLL_SECONDS <= 600  # 18.7: minutes, not an hour


def test_a_refused_catalog_fetch_fails_the_tick(fake_fedlex: FakeFedlex, before: Catalog):
    with dg.instance_for_test() as instance:
        built_from(fake_fedlex, before)
        fake_fedlex.sparql_fault = lambda query: Reply(400, WAF_PAGE, {"Content-Type": "text/html"})
        with pytest.raises(FedlexFirewallError):
            tick(fake_fedlex, instance)
        fake_fedlex.sparql_fault = None
        assert tick(fake_fedlex, instance).run_requests == []


DIES_MID_RUN = """
import os, signal
import dagster as dg
from chpit_assets.instance import process_tags

@dg.op
def killed():
    os.kill(os.getpid(), signal.SIGKILL)

@dg.job
def doomed():
    killed()

doomed.execute_in_process(instance=dg.DagsterInstance.get(), tags=process_tags())
"""


def test_a_run_whose_process_was_killed_is_failed_by_the_monitor_sensor(tmp_path, monkeypatch):
    """Issue 14.6: kill -9 a process in the middle of its run; the next tick marks the run failed."""
    import signal
    import subprocess
    import sys

    from chpit_assets.defs.ops.sensors import dead_run_monitor

    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    done = subprocess.run([sys.executable, "-c", DIES_MID_RUN], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    with dg.DagsterInstance.get() as instance:
        [run] = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.STARTED  # what the UI would show forever
        with dg.build_sensor_context(instance=instance) as context:
            first = dead_run_monitor(context)
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
        assert "1 run(s)" in first.skip_message
        with dg.build_sensor_context(instance=instance) as context:
            assert dead_run_monitor(context).skip_message == "no dead run"  # failed once, not again
