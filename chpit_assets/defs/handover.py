"""The IO manager of the assets that hand a value on (fedlex_catalog's Catalog, fedlex_editions'
download results): pickled where Dagster's default IO manager keeps them, and handed to the
later steps of the same run as the object itself.

Why not Dagster's default (issue 27.2): in a run that executes its steps in one process (the
in-process executor every build uses), the default pickles each value and unpickles it again for
each step that reads it: the catalog twice and the download results once, 0.1 s a language run on a
rebuild for objects the process still holds. The pickle is still written, at the same path, for
whatever reads it from another process or another run (a step per process, a re-execution of
parsed_articles alone, a run of a default-configured Dagster), and it is written atomically, so a
run killed mid-write leaves the last value, never a torn one.

A handed-over value is the very object the upstream step returned: the assets treat their inputs
as read-only (the catalog and its editions are frozen dataclasses; the download results a list
nobody appends to), which the pickle round trip used to hide.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import dagster as dg

from chpit_assets.files import write_atomic

PICKLE_PROTOCOL = 4
"""The protocol Dagster's default IO manager writes: either manager reads the other's files."""


class HandoverError(ValueError):
    """An input that was never stored, or that cannot be read back; the message names the asset and partition."""


class HandoverIOManager(dg.IOManager):
    """Values under `base_dir`/<asset key path>/<partition key>, as Dagster's default lays them out."""

    def __init__(self, base_dir: Path):
        self._base_dir = base_dir
        self._handed: dict[Path, Any] = {}  # this run's outputs, by path: the manager lives as long as the run

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if not context.has_asset_key:
            raise HandoverError(f"output {context.name!r} of step {context.step_key!r}: only assets' values are kept")
        path = self._path(context.asset_key, context.asset_partition_key if context.has_asset_partitions else None)
        # Not fsynced, as Dagster's own is not: a value lost to a power cut fails its next load by name.
        write_atomic(path, pickle.dumps(obj, PICKLE_PROTOCOL), durable=False)
        self._handed[path] = obj

    def load_input(self, context: dg.InputContext) -> Any:
        """The upstream value; for an input of several partitions, {partition key: value}, as
        Dagster's default gives it."""
        if not context.has_asset_key:
            raise HandoverError(f"input {context.name!r}: only assets' values are kept")
        if not context.has_asset_partitions:
            return self._load(context.asset_key, None)
        keys = context.asset_partition_keys
        if len(keys) == 1:
            return self._load(context.asset_key, keys[0])
        return {key: self._load(context.asset_key, key) for key in keys}

    def _load(self, asset_key: dg.AssetKey, partition: str | None) -> Any:
        path = self._path(asset_key, partition)
        if path in self._handed:
            return self._handed[path]
        where = asset_key.to_user_string() + (f" [{partition}]" if partition is not None else "")
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise HandoverError(f"{where}: never materialised here (no {path}); materialise it first") from exc
        try:
            return pickle.loads(data)
        except Exception as exc:  # any unpickling fault: named, never a half-read value
            raise HandoverError(f"{where}: {path} cannot be read back ({type(exc).__name__}: {exc})") from exc

    def _path(self, asset_key: dg.AssetKey, partition: str | None) -> Path:
        parts = [*asset_key.path, *([partition] if partition is not None else [])]
        if any(not p or p in (".", "..") or "/" in p or "\0" in p for p in parts):
            raise HandoverError(f"{asset_key.to_user_string()}: partition {partition!r} cannot name a file")
        return self._base_dir.joinpath(*parts)


class HandoverIOManagerFactory(dg.ConfigurableIOManagerFactory):
    """One HandoverIOManager per run (a step, with one process per step), under the instance's storage folder."""

    def create_io_manager(self, context: dg.InitResourceContext) -> HandoverIOManager:
        assert context.instance is not None  # Dagster gives every run's resources its instance
        return HandoverIOManager(Path(context.instance.storage_directory()))
