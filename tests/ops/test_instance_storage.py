"""Point 6 and issue 17.1: the shipped dagster.yaml keeps the instance in SQLite, with dagster.postgres.yaml
appended in the PostgreSQL database of $CHPIT_PG_URL; a process that disagrees with its instance is refused."""

from __future__ import annotations

import dagster as dg
import pytest

from chpit_assets.defs.fedlex.assets import (
    fedlex_catalog,
    fedlex_editions,
    parsed_articles,
)
from chpit_assets.defs.resources import ChpitStore, FedlexSource
from chpit_assets.instance import InstanceStorageError, install_instance_file, open_instance, prepare_instance
from chpit_assets.orchestration.backfill import driving_instance

from .conftest import SAMPLE, pg_rows


def test_the_shipped_file_keeps_the_instance_in_sqlite_under_dagster_home(dagster_home, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.delenv("CHPIT_PG_URL", raising=False)
    with open_instance() as instance:
        # By name: the storage classes are not part of Dagster's public API.
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert type(instance.event_log_storage).__name__ == "SqliteEventLogStorage"
        instance.get_runs()
    assert list(dagster_home.rglob("runs.db"))  # the database files are in the home


def test_the_postgres_file_opens_that_database(postgres_home, pg_url, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(postgres_home))
    monkeypatch.setenv("CHPIT_PG_URL", pg_url)
    with open_instance() as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        with driving_instance(instance) as driving:  # only Dagster's SQLite storage is opened otherwise
            assert driving is instance
    assert ("runs",) in pg_rows(pg_url, "SELECT table_name FROM information_schema.tables WHERE table_name = 'runs'")


@pytest.mark.parametrize(
    "postgres, url, message",
    [
        (False, "postgresql+psycopg2://u@127.0.0.1:5432/db", "is set, but the instance in .* keeps its runs in SQLite"),
        (True, "", "keeps its runs in PostgreSQL, but \\$CHPIT_PG_URL is unset"),
        (True, "postgresql://u:pw@127.0.0.1:5432/db", "must start with postgresql\\+psycopg2://"),
    ],
)
def test_a_process_that_disagrees_with_its_instance_is_refused(dagster_home, monkeypatch, postgres, url, message):
    """Issue 18.4: no silent fallback, and no empty instance shown by accident."""
    install_instance_file(dagster_home, postgres=postgres)
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    monkeypatch.setenv("CHPIT_PG_URL", url)
    with pytest.raises(InstanceStorageError, match=message) as raised:
        open_instance()
    assert "pw" not in str(raised.value)


def test_an_unreachable_postgres_is_a_clear_error_without_the_password(postgres_home, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(postgres_home))
    # Port 9 (discard) is closed on loopback, so the connection is refused at once.
    monkeypatch.setenv("CHPIT_PG_URL", "postgresql+psycopg2://chpit:s3cret@127.0.0.1:9/dagster")
    with pytest.raises(InstanceStorageError, match=r"\$CHPIT_PG_URL") as raised:
        open_instance()
    assert "Connection refused" in str(raised.value)
    assert "s3cret" not in str(raised.value)


def test_a_materialisation_lands_runs_events_and_assets_in_postgres(postgres_home, pg_url, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(postgres_home))
    monkeypatch.setenv("CHPIT_PG_URL", pg_url)
    with open_instance() as instance:
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
    # Nothing went to an embedded SQLite on the side (storage/ holds the IO manager's pickles only).
    assert not list(postgres_home.rglob("*.db"))
