"""Dagster instance storage chosen from the environment: PostgreSQL when configured, else the embedded SQLite.

`dagster.yaml` is static YAML, so it cannot say "Postgres if a URL is set". It names
`ChpitInstanceStorage` as custom storage instead; Dagster calls `from_config_value` every
time an instance is loaded from that file or rehydrated from an `InstanceRef` (a run
worker, a Celery worker, a step subprocess). The reference carries the unresolved config
(the env var's name, `{env: DAGSTER_HOME}`), so each process decides from its own
environment: workers must be started with the same `CHPIT_PG_URL` and `DAGSTER_HOME`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClass, ConfigurableClassData

PG_URL_ENV = "CHPIT_PG_URL"
"""Default name of the variable holding a SQLAlchemy/libpq URL, e.g. postgresql://user:pw@host:5432/dagster."""


class InstanceStorageError(RuntimeError):
    """The configured PostgreSQL instance storage could not be opened."""


class ChpitInstanceStorage(DagsterStorage, ConfigurableClass):
    """Factory for the instance's unified storage (runs, events, schedules).

    Subclasses DagsterStorage only because Dagster checks the configured class against it
    before calling `from_config_value`; it is never instantiated itself. `from_config_value`
    returns Dagster's own `DagsterPostgresStorage` or `DagsterSqliteStorage`, each carrying
    this class's `inst_data`, so a reference taken from the instance points back here and is
    decided again by the process that loads it.
    """

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {
            "postgres_url_env": dg.Field(
                str,
                default_value=PG_URL_ENV,
                description="Name of the environment variable with the PostgreSQL URL; unset or empty = SQLite.",
            ),
            "dagster_home": dg.Field(
                dg.StringSource,
                description="The instance home; SQLite storage lives in <dagster_home>/storage, "
                "where Dagster's default keeps it.",
            ),
        }

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> DagsterStorage:
        url = os.environ.get(config_value["postgres_url_env"], "").strip()
        if not url:
            return DagsterSqliteStorage.from_local(
                base_dir=str(Path(config_value["dagster_home"]) / "storage"), inst_data=inst_data
            )
        # dagster_postgres is a hard dependency; imported here so the SQLite path never loads psycopg2.
        from dagster_postgres import DagsterPostgresStorage

        try:
            return DagsterPostgresStorage(postgres_url=_psycopg2_url(url), inst_data=inst_data)
        except Exception as exc:  # after dagster-postgres's own retries; the chain could echo the URL's password
            reason = exc.__cause__ or exc
            raise InstanceStorageError(
                f"cannot open Dagster instance storage on PostgreSQL from ${config_value['postgres_url_env']}: "
                f"{type(reason).__name__}: {_redact(str(reason), url)}"
            ) from None


def _psycopg2_url(url: str) -> str:
    """The URL with the psycopg2 driver named: SQLAlchemy 2.1 maps a bare postgresql:// to
    psycopg 3, which is not installed; dagster-postgres ships psycopg2."""
    scheme, sep, rest = url.partition("://")
    return f"postgresql+psycopg2://{rest}" if sep and scheme in ("postgres", "postgresql") else url


def _redact(message: str, url: str) -> str:
    """The error text without the URL (it may hold a password)."""
    return message.replace(_psycopg2_url(url), "<url>").replace(url, "<url>")
