"""hf_dataset through Dagster on the real sample: the published folder loads with `datasets`,
publications are byte-identical, a failed gate publishes nothing and leaves the previous build
byte-for-byte, the no-token path says it stayed local, and an upload reaches a loopback Hub."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import yaml

from chpit_assets.publish.folder import folder_files
from chpit_assets.synthetic import SYNTHETIC_ELI_ROOT

from .conftest import PUBLISH, copy_data, publish_run
from .fake_hub import FakeHub

HF = dg.AssetKey("hf_dataset")


def items_of(data, lang="de") -> list[dict]:
    return [json.loads(line) for line in (data / "build" / f"bench-{lang}.jsonl").read_text().splitlines()]


def rewrite(data, items, lang="de") -> None:
    (data / "build" / f"bench-{lang}.jsonl").write_text(
        "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items)
    )


def checks(result) -> dict[str, dg.AssetCheckEvaluation]:
    return {c.check_name: c for c in result.get_asset_check_evaluations()}


def hf_metadata(result) -> dict:
    [mat] = [m for m in result.asset_materializations_for_node("hf_dataset")]
    return {k: v.value for k, v in mat.metadata.items()}


def leftovers(data) -> list[str]:
    """Staged folders and a previous build left beside data/publish (the lock file is meant to stay)."""
    return sorted(p.name for p in data.iterdir() if p.name.startswith(".publish-next") or p.name.endswith(".previous"))


def test_publish_then_load_with_datasets(data, tmp_path):
    from datasets import load_dataset

    with dg.instance_for_test() as instance:
        result = publish_run(data, instance)
    assert result.success
    assert {name: c.passed for name, c in checks(result).items()} == {
        "oracle_one": True,
        "oracle_published": True,
        "ids_unique": True,
        "published_items_frozen": True,
        "item_counts_in_bounds": True,
        "texts_not_empty": True,
        "schema_exact": True,
        "no_synthetic_acts": True,
        "editions_all_parsed": True,
        "system_lines_clean": True,
        "recite_stamped": True,
    }
    publish = data / "publish"
    assert sorted(folder_files(publish)) == [
        "README.md",
        "data/de/core-00000-of-00001.parquet",
        "data/de/full-00000-of-00001.parquet",
        "data/fr/core-00000-of-00001.parquet",
        "data/fr/full-00000-of-00001.parquet",
    ]
    items = items_of(data)
    core = [i for i in items if i["core"]]
    ds = load_dataset(str(publish), "de", split="core", cache_dir=str(tmp_path / "hf-cache"))
    assert ds["id"] == [i["id"] for i in core] and ds[0]["gold"]["text"] == core[0]["gold"]["text"]
    assert ds[0]["distractor"]["version_id"] == core[0]["distractor"]["version_id"]
    assert {r["recite_label"] for r in ds} == {"grounded_correct", "grounded_wrong_version"}  # stamped from recite
    assert len(load_dataset(str(publish), "de", split="full", cache_dir=str(tmp_path / "hf-cache"))) == len(items)

    card = (publish / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "other" and meta["language"] == ["de", "fr"]
    assert meta["configs"] == [
        {
            "config_name": "de",
            "default": True,
            "data_files": [
                {"split": "core", "path": "data/de/core-*.parquet"},
                {"split": "full", "path": "data/de/full-*.parquet"},
            ],
        },
        {
            "config_name": "fr",
            "data_files": [
                {"split": "core", "path": "data/fr/core-*.parquet"},
                {"split": "full", "path": "data/fr/full-*.parquet"},
            ],
        },
    ]
    assert "Fedlex data may be reused free of charge with source attribution" in card
    assert "No items in this build for it" in card and "| de | 7 | 5 | 9 | 9 | 9 |" in card
    assert "| identical_or_short | 2 | 0 | 0 |" in card
    assert (
        "| recite | 10 | 60.0 [" in card and "| 40.0 [" in card
    )  # the report's results table: de and fr recited, as `make run` does
    # no token, no repo: written locally, and the materialisation says so
    assert hf_metadata(result)["upload"] == "local only: repo_id and $HF_TOKEN not set"
    meta = hf_metadata(result)
    changes = meta["count_changes"].splitlines()  # a first publication: every language and act is new
    assert meta["editions_on_last_good_file"] == 0 and changes[0] == "- de: 0 -> 9 items"
    assert "- fr: 0 -> 1 items" in changes and all(line.endswith(" items") for line in changes)
    assert set(meta["checked_sha256"]) == {"de", "fr", "it"}
    assert not (tmp_path / "frozen").exists() and leftovers(data) == []


def test_two_publications_are_byte_identical(data, sample_data, tmp_path):
    other = copy_data(sample_data, tmp_path / "elsewhere" / "data")
    with dg.instance_for_test() as instance:
        assert publish_run(data, instance).success and publish_run(other, instance).success
    published = folder_files(data / "publish")
    assert published == folder_files(other / "publish") and len(published) == 5


def _duplicate_id(data) -> str:
    items = items_of(data)
    items[1]["id"] = items[0]["id"]
    rewrite(data, items)
    return f"de: {items[0]['id']}: duplicate id"


def _drop_oracle(data) -> str:
    (data / "results" / "oracle" / "de.scored.jsonl").unlink()
    return "de: 0 scored oracle lines for 9 core items"


def _synthetic(data) -> str:
    items = items_of(data)
    items[2]["gold"]["eli"] = f"{SYNTHETIC_ELI_ROOT}/2022/491/20250401"
    rewrite(data, items)
    return f"de: {items[2]['id']}: synthetic act"


def _errored_system_line(data) -> str:
    # A system whose line errored (a model endpoint that failed after its retries): not a whole run.
    line = json.loads((data / "results" / "oracle" / "de.scored.jsonl").read_text().splitlines()[0])
    folder = data / "results" / "cite" / "current"
    folder.mkdir(parents=True)
    line.update(error="ModelCallError: HTTP 503: gave up after 6 attempts")
    (folder / "de.scored.jsonl").write_text(json.dumps(line) + "\n")
    return f"cite/current/de: {line['id']}: ModelCallError"


def _unstamped(data) -> str:
    path = data / "results" / "recite" / "de.scored.jsonl"
    first, *rest = path.read_text().splitlines(keepends=True)
    path.write_text("".join(rest))
    return f"de: {json.loads(first)['id']}: no recite line, so no recite stamp"


def _failed_new_edition(data) -> str:
    # The case: a new file of an edition failed its sha256 check; the last good parse is kept.
    import duckdb

    with duckdb.connect(str(data / "chpit.duckdb")) as con:
        (eli,) = con.execute(
            "UPDATE ch_act_version SET failed_stage = 'validate', failed_url = 'file:///new.xml', "
            "failed_error = 'sha256 abc != catalog def' WHERE version_id = (SELECT min(version_id) "
            "FROM ch_act_version WHERE stage = 'parsed' AND lang = 'de') RETURNING eli"
        ).fetchone()
    return f"{eli} (file:///new.xml): validate: sha256 abc != catalog def"


BREAKAGES = [
    (_duplicate_id, "ids_unique"),
    (_drop_oracle, "oracle_one"),
    (_synthetic, "no_synthetic_acts"),
    (_errored_system_line, "system_lines_clean"),
    (_unstamped, "recite_stamped"),
    (_failed_new_edition, "editions_all_parsed"),
]


def test_a_failed_gate_publishes_nothing_and_keeps_the_previous_build(data, tmp_path):
    pristine = tmp_path / "pristine"
    shutil.copytree(data, pristine)
    with dg.instance_for_test() as instance:
        assert publish_run(data, instance).success
        before = folder_files(data / "publish")
        for breakage, check in BREAKAGES:
            offender = breakage(data)
            result = publish_run(data, instance)
            assert not result.success
            failing = {name: c for name, c in checks(result).items() if not c.passed}
            assert list(failing) == [check], breakage.__name__
            assert offender in failing[check].metadata["offenders"].value  # the UI names what failed
            assert failing[check].description.startswith("FAILED: ") and offender in failing[check].description
            assert not result.asset_materializations_for_node("hf_dataset")  # the blocking check stopped it
            assert folder_files(data / "publish") == before and leftovers(data) == []
            if breakage is _synthetic:
                # Selected alone, hf_dataset runs the same gate itself and refuses.
                alone = publish_run(data, instance, selection=[HF])
                assert not alone.success
                failure = next(e for e in alone.all_events if e.is_step_failure).step_failure_data.user_failure_data
                assert failure.description.startswith(f"gate FAILED: {check} ({offender}")
                assert "left as it was" in failure.description
                assert folder_files(data / "publish") == before
            for part in ("build", "results"):
                shutil.rmtree(data / part)
                shutil.copytree(pristine / part, data / part)
            for store_file in pristine.glob("chpit.duckdb*"):
                shutil.copy2(store_file, data / store_file.name)


def test_a_collapsed_language_is_refused_against_the_previous_publication(data):
    with dg.instance_for_test() as instance:
        assert publish_run(data, instance).success
        before = folder_files(data / "publish")
        items = items_of(data)[:4]
        rewrite(data, items)
        report = json.loads((data / "build" / "build-report.json").read_text())
        report["de"]["items"] = 4
        (data / "build" / "build-report.json").write_text(json.dumps(report))
        result = publish_run(data, instance, {"max_drop_share": 0.5})
        failing = {name: c for name, c in checks(result).items() if not c.passed}
        assert list(failing) == ["item_counts_in_bounds"]
        meta = failing["item_counts_in_bounds"].metadata
        assert (
            "de: 4 items, the previous publication had 9: 5 fewer, more than the 4.5 allowed" in meta["offenders"].value
        )
        assert "- de: 9 -> 4 items" in meta["count_changes"].value  # and which acts moved, one line each
        assert meta["count_changes"].value.count("\n- de: SR ") >= 1
        # a drop within the configured bound passes, and still lists what changed
        assert publish_run(data, instance, {"max_drop_share": 0.6}).success
    assert folder_files(data / "publish") != before


def test_a_gold_text_changed_in_bench_but_not_in_core_is_never_published(data):
    """Issue 15 point 1, the tamper case: the runs' oracle scored core-de.jsonl, which is intact; the
    gate's own oracle looks up every item of bench-de.jsonl, the file the publication is made from."""
    with dg.instance_for_test() as instance:
        assert publish_run(data, instance).success
        before = folder_files(data / "publish")
        items = items_of(data)
        core = (data / "build" / "core-de.jsonl").read_bytes()
        items[3]["gold"]["text"] += " Dieser Satz steht in keiner Fassung."
        rewrite(data, items)
        assert (data / "build" / "core-de.jsonl").read_bytes() == core
        for selection in (PUBLISH, [HF]):
            result = publish_run(data, instance, selection=selection)
            assert not result.success
            assert not result.asset_materializations_for_node("hf_dataset")
            assert folder_files(data / "publish") == before and leftovers(data) == []
        failing = {name: c for name, c in checks(publish_run(data, instance)).items() if not c.passed}
        assert list(failing) == ["oracle_published"]
        assert f"de: {items[3]['id']}: oracle " in failing["oracle_published"].description
        alone = publish_run(data, instance, selection=[HF])
        failure = next(e for e in alone.all_events if e.is_step_failure).step_failure_data.user_failure_data
        assert failure.description.startswith(f"gate FAILED: oracle_published (de: {items[3]['id']}: oracle ")


def test_a_crash_between_the_renames_is_repaired_even_when_the_next_gate_fails(data):
    """Issue 15 point 2: killed between the swap's renames, then a run whose gate fails: the previous
    build must be live again, not left in data/publish.previous."""
    with dg.instance_for_test() as instance:
        assert publish_run(data, instance).success
        before = folder_files(data / "publish")
        (data / "publish").rename(data / "publish.previous")
        (data / ".publish-next-killed").mkdir()
        (data / ".publish-next-killed" / "README.md").write_text("half a build")
        (data / "results" / "oracle" / "de.scored.jsonl").unlink()  # this run's gate fails
        result = publish_run(data, instance)
        assert not result.success
        assert folder_files(data / "publish") == before and leftovers(data) == []


def test_upload_to_a_loopback_hub_then_the_frozen_record_grows(data, tmp_path, monkeypatch):
    hub = FakeHub()
    frozen = tmp_path / "frozen"
    config = {"repo_id": "overthelex/ch-pit", "hub_endpoint": hub.url}
    monkeypatch.setenv("HF_TOKEN", "hf_loopback_token")
    try:
        with dg.instance_for_test() as instance:
            result = publish_run(data, instance, config)
            assert result.success
            [commit] = hub.commits
            assert (
                commit.repo == "overthelex/ch-pit" and commit.revision == "main" and commit.token == "hf_loopback_token"
            )
            assert commit.summary == "CH-PiT build dev" and hub.repos == ["overthelex/ch-pit:dataset"]
            assert commit.files == folder_files(data / "publish")
            assert 'load_dataset("overthelex/ch-pit", "de", split="core")' in commit.files["README.md"].decode()
            meta = hf_metadata(result)
            assert meta["upload"].endswith("/datasets/overthelex/ch-pit/commit/" + "0" * 39 + "1")
            assert meta["frozen_added"] == {"de": 9, "fr": 1}
            recorded = [json.loads(line) for line in (frozen / "de.jsonl").read_text().splitlines()]
            assert [i["id"] for i in recorded] == sorted(i["id"] for i in items_of(data))
            assert {i["recite_label"] for i in recorded} == {"grounded_correct", "grounded_wrong_version"}
            record = (frozen / "de.jsonl").read_bytes()

            # The same build again: the record does not change; the gate now checks against it.
            again = publish_run(data, instance, config)
            assert again.success and hf_metadata(again)["frozen_added"] == {"de": 0, "fr": 0}
            assert (frozen / "de.jsonl").read_bytes() == record
            assert all(c.passed for c in checks(again).values())
    finally:
        hub.close()


def test_a_failed_upload_keeps_the_frozen_record_as_it_was(data, tmp_path, monkeypatch):
    hub = FakeHub(fail_commits=True)
    monkeypatch.setenv("HF_TOKEN", "hf_loopback_token")
    config = {"repo_id": "overthelex/ch-pit", "hub_endpoint": hub.url}
    try:
        with dg.instance_for_test() as instance:
            result = publish_run(data, instance, config)
    finally:
        hub.close()
    assert not result.success and hub.commits == []
    failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data.user_failure_data
    assert "dataset overthelex/ch-pit failed: 403" in failure.description
    assert "the frozen record is unchanged; re-run hf_dataset to retry" in failure.description
    assert not (tmp_path / "frozen").exists()  # nothing became public, so nothing is frozen
    assert (data / "publish" / "README.md").exists()  # the gated build is published locally; a re-run retries
