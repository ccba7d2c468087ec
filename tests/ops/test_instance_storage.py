"""Point 6: dagster.yaml puts the instance on PostgreSQL when CHPIT_PG_URL is set, on SQLite otherwise."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from chpit_assets.defs.fedlex.assets import (
    fedlex_catalog,
    fedlex_editions,
    parsed_articles,
)
from chpit_assets.defs.resources import ChpitStore, FedlexSource
from chpit_assets.instance import ChpitInstanceStorage, InstanceStorageError, prepare_instance

from .conftest import SAMPLE, pg_rows


def test_without_a_url_the_instance_is_the_embedded_sqlite_under_dagster_home(dagster_home, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.delenv("CHPIT_PG_URL", raising=False)
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        # By name: the storage classes are not part of Dagster's public API.
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert type(instance.event_log_storage).__name__ == "SqliteEventLogStorage"
        assert Path(instance.event_log_storage._base_dir).is_relative_to(dagster_home / "storage")
        # The reference handed to run workers names the factory, so they decide again from their own env.
        assert instance.get_ref().storage_data.class_name == ChpitInstanceStorage.__name__


def test_an_unreachable_postgres_is_a_clear_error_without_the_password(dagster_home, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    # Port 9 (discard) is closed on loopback, so the connection is refused at once.
    monkeypatch.setenv("CHPIT_PG_URL", "postgresql://chpit:s3cret@127.0.0.1:9/dagster")
    with pytest.raises(InstanceStorageError, match=r"\$CHPIT_PG_URL") as raised:
        dg.DagsterInstance.from_config(str(dagster_home))
    assert "Connection refused" in str(raised.value)
    assert "s3cret" not in str(raised.value)


def test_a_materialisation_lands_runs_events_and_assets_in_postgres(dagster_home, pg_url, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.setenv("CHPIT_PG_URL", pg_url)
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        prepare_instance(instance)  # the set-up every entry point runs: the `lang` partitions among it
        result = dg.materialize(
            [fedlex_catalog, fedlex_editions, parsed_articles],
            partition_key="de",
            instance=instance,
            resources={
                "chpit": ChpitStore(data_dir=str(tmp_path / "data")),
                "fedlex": FedlexSource(sample_dir=str(SAMPLE)),
            },
        )
    assert result.success
    run_id = result.run_id

    # Read back with plain SQL, not through Dagster: the rows are really in PostgreSQL.
    assert pg_rows(pg_url, "SELECT status FROM runs WHERE run_id = %s", (run_id,)) == [("SUCCESS",)]
    event_types = {
        t for (t,) in pg_rows(pg_url, "SELECT dagster_event_type FROM event_logs WHERE run_id = %s", (run_id,))
    }
    expected = [
        dg.DagsterEventType.RUN_START,
        dg.DagsterEventType.STEP_SUCCESS,
        dg.DagsterEventType.ASSET_MATERIALIZATION,
        dg.DagsterEventType.RUN_SUCCESS,
    ]
    assert {t.value for t in expected} <= event_types  # stored by value: RUN_START is 'PIPELINE_START'
    materialised = pg_rows(
        pg_url,
        "SELECT asset_key, partition FROM event_logs"
        " WHERE run_id = %s AND dagster_event_type = 'ASSET_MATERIALIZATION' ORDER BY asset_key",
        (run_id,),
    )
    assert materialised == [('["fedlex_catalog"]', "de"), ('["fedlex_editions"]', "de"), ('["parsed_articles"]', "de")]
    assert ('["parsed_articles"]',) in pg_rows(pg_url, "SELECT asset_key FROM asset_keys")
    # Nothing went to the embedded default on the side (storage/ itself holds the IO manager's pickles).
    assert not list((dagster_home / "storage").rglob("*.db"))
