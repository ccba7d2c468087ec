"""Issue 17.2: the shipped definitions as one reviewed file, so a change to the graph is a visible diff.

`graph_snapshot.json` holds every asset (deps, partitions, group, kinds, owners, pool, automation, freshness),
every check, job (with the assets it selects), schedule, sensor and resource of `chpit_assets.definitions.defs`.
After an intended change, rewrite it with `CHPIT_UPDATE_SNAPSHOT=1 pytest tests/defs/test_graph_snapshot.py`
and commit the diff with the change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg

SNAPSHOT = Path(__file__).with_name("graph_snapshot.json")


def _partitions(partitions_def: dg.PartitionsDefinition | None) -> object:
    if partitions_def is None:
        return None
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return {d.name: _partitions(d.partitions_def) for d in partitions_def.partitions_defs}
    if isinstance(partitions_def, dg.DynamicPartitionsDefinition):
        return f"dynamic:{partitions_def.name}"
    return f"{type(partitions_def).__name__}"


def describe(defs: dg.Definitions) -> dict:
    graph = defs.resolve_asset_graph()
    assets = {}
    for assets_def in graph.assets_defs:
        for spec in assets_def.specs:
            condition = spec.automation_condition
            assets[spec.key.to_user_string()] = {
                "deps": sorted(dep.asset_key.to_user_string() for dep in spec.deps),
                "partitions": _partitions(spec.partitions_def),
                "group": spec.group_name,
                "kinds": sorted(spec.kinds),
                "owners": list(spec.owners),
                "pool": assets_def.op.pool if assets_def.is_executable else None,
                "automation": condition.get_label() if condition is not None else None,
                "freshness": repr(spec.freshness_policy) if spec.freshness_policy is not None else None,
                "checks": sorted(key.name for key in assets_def.check_keys if key.asset_key == spec.key),
            }
    for checks_def in defs.asset_checks or []:
        for key in checks_def.check_keys:
            entry = assets[key.asset_key.to_user_string()]
            entry["checks"] = sorted({*entry["checks"], key.name})
    repo = defs.get_repository_def()
    jobs = {
        job.name: {
            "description": bool(job.description),
            "assets": sorted(k.to_user_string() for k in job.asset_layer.selected_asset_keys),
            "ops": sorted(node.name for node in job.graph.nodes) if not job.asset_layer.selected_asset_keys else [],
        }
        for job in repo.get_all_jobs()
        if not job.name.startswith("__")
    }
    schedules = {
        s.name: {"cron": s.cron_schedule, "timezone": s.execution_timezone, "job": s.job_name}
        for s in repo.schedule_defs
    }
    sensors = {s.name: {"job": s.job_name if s.has_jobs else None, "type": type(s).__name__} for s in repo.sensor_defs}
    resources = {key: type(resource).__name__ for key, resource in sorted((defs.resources or {}).items())}
    return {
        "assets": dict(sorted(assets.items())),
        "jobs": jobs,
        "schedules": schedules,
        "sensors": sensors,
        "resources": resources,
    }


def test_the_shipped_graph_equals_its_reviewed_snapshot():
    from chpit_assets.definitions import defs

    current = json.dumps(describe(defs), indent=1, sort_keys=True) + "\n"
    if os.environ.get("CHPIT_UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert current == SNAPSHOT.read_text(encoding="utf-8"), (
        "the asset graph changed: review, then CHPIT_UPDATE_SNAPSHOT=1 pytest tests/defs/test_graph_snapshot.py"
    )


def test_the_tests_use_the_shipped_definitions():
    """tests/dagster_defs.defs_for replaces the data folder only: the graph is the one that ships."""
    from chpit_assets.definitions import defs
    from tests.dagster_defs import defs_for

    assert describe(defs_for(Path("/nonexistent"))) == describe(defs)
