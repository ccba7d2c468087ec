"""The IO manager that hands a value to the later steps of its run (chpit_assets/defs/handover.py,
issue 27.2): the object itself within the run, the pickle Dagster's default IO manager would write
for anything else, never a torn or misplaced file."""

from __future__ import annotations

import pickle
from pathlib import Path

import dagster as dg
import pytest

from chpit_assets.defs.handover import HandoverError, HandoverIOManager, HandoverIOManagerFactory

LANGS = dg.StaticPartitionsDefinition(["de", "fr"])
SEEN: dict[str, object] = {}


@dg.asset(partitions_def=LANGS)
def made() -> dict:
    value = {"editions": ("a", "b")}
    SEEN["made"] = value
    return value


@dg.asset(partitions_def=LANGS)
def used(made: dict) -> int:
    SEEN["used"] = made
    return len(made["editions"])


@dg.asset
def whole() -> list[int]:
    return [1, 2, 3]


@dg.asset
def gathered(made: dict) -> None:
    SEEN["gathered"] = made


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


@pytest.fixture(autouse=True)
def forget():
    SEEN.clear()


def _materialize(assets, instance, partition_key="de", io_manager=None, **kwargs) -> dg.ExecuteInProcessResult:
    io_manager = HandoverIOManagerFactory() if io_manager is None else io_manager
    return dg.materialize(
        assets, instance=instance, partition_key=partition_key, resources={"io_manager": io_manager}, **kwargs
    )


def test_within_a_run_the_next_step_gets_the_object_itself_and_the_pickle_is_written(instance) -> None:
    assert _materialize([made, used], instance).success
    assert SEEN["used"] is SEEN["made"]  # no pickle round trip inside the run
    stored = pickle.loads((_stored(instance, "made", "de")).read_bytes())
    assert stored == SEEN["made"]


def test_another_run_loads_the_stored_value(instance) -> None:
    assert _materialize([made], instance).success
    first = SEEN["made"]
    SEEN.clear()
    assert _materialize([made.to_source_asset(), used], instance).success  # `made` only read, not executed
    assert SEEN["used"] == first and SEEN["used"] is not first


@pytest.mark.parametrize("writer, reader", [("default", "handover"), ("handover", "default")])
def test_its_files_are_the_ones_dagster_s_default_io_manager_reads_and_writes(instance, writer, reader) -> None:
    """Same paths, same format: a store of either is read by the other (an instance built before
    this manager existed, or a job run with Dagster's default)."""
    managers = {"default": dg.FilesystemIOManager(base_dir=str(instance.storage_directory())), "handover": None}
    assert _materialize([made], instance, partition_key="fr", io_manager=managers[writer]).success
    written = SEEN["made"]
    assert _materialize(
        [made.to_source_asset(), used], instance, partition_key="fr", io_manager=managers[reader]
    ).success
    assert SEEN["used"] == written


def test_an_unpartitioned_value_lies_under_its_asset_key(instance) -> None:
    assert dg.materialize([whole], instance=instance, resources={"io_manager": HandoverIOManagerFactory()}).success
    assert pickle.loads((_stored(instance, "whole")).read_bytes()) == [1, 2, 3]


def test_an_input_of_several_partitions_is_each_partition_s_value_by_key(instance) -> None:
    for lang in ("de", "fr"):
        assert _materialize([made], instance, partition_key=lang).success
    assert dg.materialize(
        [made.to_source_asset(), gathered], instance=instance, resources={"io_manager": HandoverIOManagerFactory()}
    ).success
    assert SEEN["gathered"] == {"de": {"editions": ("a", "b")}, "fr": {"editions": ("a", "b")}}


def test_an_input_never_materialised_is_refused_by_name(instance) -> None:
    result = _materialize([made.to_source_asset(), used], instance, raise_on_error=False)
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert failure is not None
    assert "HandoverError" in failure.to_string() and "made [de]: never materialised here" in failure.to_string()


def test_a_damaged_value_is_refused_by_path_never_half_read(instance) -> None:
    assert _materialize([made], instance).success
    path = _stored(instance, "made", "de")
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(HandoverError, match=f"made \\[de\\]: {path} cannot be read back"):
        _manager(instance).load_input(dg.build_input_context(asset_key=dg.AssetKey("made"), partition_key="de"))


def test_a_value_that_cannot_be_pickled_leaves_the_last_one_in_place(instance) -> None:
    manager = _manager(instance)
    manager.handle_output(dg.build_output_context(asset_key="made", partition_key="de"), {"kept": 1})
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        manager.handle_output(dg.build_output_context(asset_key="made", partition_key="de"), {"lost": lambda: 1})
    folder = _stored(instance, "made")
    assert [p.name for p in folder.iterdir()] == ["de"]  # no temporary file left beside it
    assert pickle.loads((folder / "de").read_bytes()) == {"kept": 1}


@pytest.mark.parametrize("partition", ["..", ".", "a/b", "x\0y"])
def test_a_partition_key_that_would_leave_its_folder_is_refused(instance, partition) -> None:
    context = dg.build_output_context(asset_key="made", partition_key=partition)
    with pytest.raises(HandoverError, match="cannot name a file"):
        _manager(instance).handle_output(context, 1)
    assert not (_stored(instance, "made")).exists()


def test_an_op_s_output_is_refused_by_name(instance) -> None:
    with pytest.raises(HandoverError, match="output 'result' of step 'counted': only assets' values are kept"):
        _manager(instance).handle_output(dg.build_output_context(step_key="counted", name="result"), 1)


def test_the_code_location_hands_its_values_over() -> None:
    from chpit_assets.defs import resources

    assert isinstance(resources.defs.resources["io_manager"], HandoverIOManagerFactory)


def _manager(instance: dg.DagsterInstance) -> HandoverIOManager:
    return HandoverIOManager(_stored(instance))


def _stored(instance: dg.DagsterInstance, *parts: str) -> Path:
    return Path(instance.storage_directory()).joinpath(*parts)
