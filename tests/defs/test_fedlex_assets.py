"""The Dagster layer of the first slice: assets, partitions, metadata, data versions, the code location."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from chpit_assets.defs.fedlex.assets import (
    DownloadResults,
    fedlex_catalog,
    fedlex_editions,
    parsed_articles,
)
from chpit_assets.defs.partitions import register_langs
from chpit_assets.defs.resources import ChpitStore, FedlexSource

ROOT = Path(__file__).resolve().parents[2]


def materialize(
    tmp_path: Path, lang: str, instance: dg.DagsterInstance, sample: Path = ROOT / "data" / "fedlex-sample", **options
) -> dg.ExecuteInProcessResult:
    register_langs(instance, [lang])
    return dg.materialize(
        [fedlex_catalog, fedlex_editions, parsed_articles],
        partition_key=lang,
        instance=instance,
        resources={
            "chpit": ChpitStore(data_dir=str(tmp_path / "data")),
            "fedlex": FedlexSource(sample_dir=str(sample)),
        },
        **options,
    )


def metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_german_partition_materialises_with_counts_and_failures(tmp_path):
    with dg.instance_for_test() as instance:
        result = materialize(tmp_path, "de", instance)
        assert result.success
        parsed = metadata(result, "parsed_articles")
        # 235.1: 3 x 77, 170.512: 2 x 29, 101: 232, 220: 1683, 311.0: 474, 142.31: 204, 0.107: 54 articles
        assert (parsed["editions"], parsed["parsed"], parsed["articles"]) == (11, 10, 2936)
        assert parsed["repeated_eids"] == 0 and parsed["editions_on_last_good_file"] == 0
        assert parsed["failures_by_stage"] == {"no_file": 1}
        assert "20220701" in parsed["failures"]
        assert "| 0.107 |" in parsed["preview"]  # the first rows by SR number: the treaty
        catalog = metadata(result, "fedlex_catalog")
        assert (catalog["acts"], catalog["editions_with_file"], catalog["editions_without_file"]) == (7, 10, 1)
        assert (tmp_path / "data" / "chpit.duckdb").is_file()


def test_unchanged_rerun_keeps_data_versions_and_parses_nothing(tmp_path):
    with dg.instance_for_test() as instance:
        materialize(tmp_path, "fr", instance)
        first = data_version(instance)
        again = materialize(tmp_path, "fr", instance)
        second = data_version(instance)
        assert metadata(again, "parsed_articles")["reparsed"] == 0
        assert metadata(again, "fedlex_editions")["by_stage"] == {"cached": 4, "no_file": 5}
        assert first is not None and first == second
        # The Civil Code's repeated eIds: kept, and counted per edition in the metadata.
        parsed = metadata(again, "parsed_articles")
        assert parsed["repeated_eids"] == 74
        assert parsed["repeated_eids_by_edition"] == {"https://fedlex.data.admin.ch/eli/cc/24/233_245_233/20240101": 74}


FILE = "cc-2022-491/20230901-de.xml"


def sample_with(tmp_path: Path, data: bytes | None = None) -> Path:
    """A temp copy of the sample; with `data`, that file replaces SR 235.1 de 2023-09-01 (and its catalog sha256)."""
    import hashlib
    import json
    import shutil

    sample = tmp_path / "sample"
    if not sample.exists():
        shutil.copytree(ROOT / "data" / "fedlex-sample", sample)
    if data is not None:
        (sample / FILE).write_bytes(data)
        raw = json.loads((sample / "catalog.json").read_text(encoding="utf-8"))
        [edition] = [e for a in raw["acts"] for e in a["editions"] if e.get("file") == FILE]
        edition["sha256"] = hashlib.sha256(data).hexdigest()
        (sample / "catalog.json").write_text(json.dumps(raw), encoding="utf-8")
    return sample


def test_a_reissued_file_keeps_the_data_version_and_shows_in_the_metadata(tmp_path):
    with dg.instance_for_test() as instance:
        materialize(tmp_path, "de", instance, sample_with(tmp_path))
        before = latest_data_version(instance, "de")
        reissued = (ROOT / "data" / "fedlex-sample" / "reissued" / FILE).read_bytes()
        result = materialize(tmp_path, "de", instance, sample_with(tmp_path, reissued))
        assert latest_data_version(instance, "de") == before
        parsed = metadata(result, "parsed_articles")
        assert (
            parsed["reparsed"] == 1 and "reissued" in parsed["reissued_files"] and "1.5.26" in parsed["reissued_files"]
        )


def test_a_bad_new_file_keeps_the_last_good_parse_and_fails_the_asset_naming_the_file(tmp_path):
    from chpit_assets.corpus.ingest import editions_on_last_good_file
    from chpit_assets.corpus.store import Store

    with dg.instance_for_test() as instance:
        materialize(tmp_path, "de", instance, sample_with(tmp_path))
        store = Store(tmp_path / "data" / "chpit.duckdb")
        count = "SELECT count(*) FROM ch_act_article a JOIN ch_act_version v USING (version_id) WHERE v.lang = 'de'"
        articles = store.frame(count).item()
        result = materialize(
            tmp_path, "de", instance, sample_with(tmp_path, b"<html><body>Fehler</body></html>"), raise_on_error=False
        )
        assert not result.success
        [failure] = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
        message = failure.event_specific_data.error.message
        assert FILE in message and "last good parse" in message and "validate" in message
        assert store.frame(count).item() == articles  # the edition's articles are still there
        assert editions_on_last_good_file(store, "de") == 1


def data_version(instance: dg.DagsterInstance) -> str | None:
    return latest_data_version(instance, "fr")


def latest_data_version(instance: dg.DagsterInstance, lang: str) -> str | None:
    record = instance.get_latest_data_version_record(dg.AssetKey("parsed_articles"), partition_key=lang)
    return record.event_log_entry.asset_materialization.tags.get("dagster/data_version")


def test_the_catalogs_data_version_is_the_sensors_digest_and_follows_a_title(tmp_path):
    """A title is written into ch_act for every language, so a title fixed in another language's
    catalog entry is a new German catalog; the version is the new-edition sensor's digest of it."""
    import json

    from chpit_assets.fedlex.catalog import load_sample_catalog
    from chpit_assets.fedlex.catalog_diff import Snapshot

    def catalog_version(sample: Path) -> str | None:
        register_langs(instance, ["de"])
        resources = {
            "chpit": ChpitStore(data_dir=str(tmp_path / "data")),
            "fedlex": FedlexSource(sample_dir=str(sample)),
        }
        assert dg.materialize([fedlex_catalog], partition_key="de", instance=instance, resources=resources).success
        record = instance.get_latest_data_version_record(fedlex_catalog.key, partition_key="de")
        return record.event_log_entry.asset_materialization.tags.get("dagster/data_version")

    sample = sample_with(tmp_path)
    with dg.instance_for_test() as instance:
        before = catalog_version(sample)
        assert before == Snapshot.of({"de": load_sample_catalog(sample, ["de"]).for_lang("de")}).lang_digest("de")
        assert catalog_version(sample) == before
        raw = json.loads((sample / "catalog.json").read_text(encoding="utf-8"))
        raw["acts"][0]["titles"]["it"]["title_short"] = "LPD (corretto)"
        (sample / "catalog.json").write_text(json.dumps(raw), encoding="utf-8")
        assert catalog_version(sample) not in (before, None)


def test_languages_are_partitions_only_once_something_asked_for_them():
    """Issue 14.6: the published three exist from the instance's set-up; en and rm only once built."""
    from chpit_assets.definitions import defs
    from chpit_assets.defs.partitions import register_langs
    from chpit_assets.instance import prepare_instance

    graph = defs.resolve_asset_graph()
    with dg.instance_for_test() as instance:
        prepare_instance(instance)
        for key in ("fedlex_catalog", "fedlex_editions", "parsed_articles", "core_split"):
            partitions = graph.get(dg.AssetKey(key)).partitions_def
            assert partitions.get_partition_keys(dynamic_partitions_store=instance) == ["de", "fr", "it"]
        register_langs(instance, ["rm", "de"])
        assert instance.get_dynamic_partitions("lang") == ["de", "fr", "it", "rm"]
        with pytest.raises(ValueError, match="unknown language"):
            register_langs(instance, ["xx"])


def test_workspace_yaml_loads_in_the_dagster_cli(tmp_path):
    env = dict(os.environ, DAGSTER_HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", str(ROOT / "workspace.yaml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "chpit" in done.stdout + done.stderr


def test_an_empty_language_catalog_is_refused_not_treated_as_all_withdrawn(tmp_path):
    import json

    import pytest

    from chpit_assets.fedlex.catalog import CatalogError

    sample = ROOT / "data" / "fedlex-sample"
    raw = json.loads((sample / "catalog.json").read_text(encoding="utf-8"))
    for act in raw["acts"]:
        act["editions"] = [e for e in act["editions"] if e["lang"] != "rm"]
    (tmp_path / "catalog.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(CatalogError, match="no edition in 'rm'"):
        FedlexSource(sample_dir=str(tmp_path)).load_catalog("rm")
    assert FedlexSource(sample_dir=str(sample)).load_catalog("rm").editions


def test_the_preview_is_the_first_five_articles_in_full_sort_order(tmp_path):
    """PREVIEW_SQL reads only the editions that can hold the first five articles: the same rows as
    sorting every article, also when they spread over editions, one of them empty, and two acts
    share an SR number and a date (the tie is broken by eId, across the two)."""
    from chpit_assets.corpus.store import Store
    from chpit_assets.defs.fedlex.assets import PREVIEW_SQL
    from tests.bench.conftest import Corpus

    corpus = Corpus(Store(tmp_path / "chpit.duckdb"))
    first, twin, later = corpus.act("a", sr="1.1"), corpus.act("b", sr="1.1"), corpus.act("c", sr="2")
    corpus.edition(first, "de", "2020-01-01", "2020-12-31", {"art_2": ("2", "a 2020 Art. 2")})
    corpus.edition(first, "de", "2021-01-01", None, {})
    corpus.edition(twin, "de", "2021-01-01", None, {"art_1": ("1", "b Art. 1"), "art_3": ("3", "b Art. 3")})
    corpus.edition(later, "de", "2019-01-01", None, {f"art_{n}": (str(n), f"c {n}") for n in range(1, 9)})
    corpus.edition(later, "fr", "2019-01-01", None, {"art_1": ("1", "fr")})
    corpus.flush()
    full = """SELECT c.sr_number, c.abbreviation, v.date_applicability, a.article_number, left(a.text, 120) AS text
              FROM ch_act_article a JOIN ch_act_version v USING (version_id) JOIN ch_act c USING (act_id)
              WHERE v.lang = ? ORDER BY c.sr_number, v.date_applicability, a.e_id, a.occurrence LIMIT 5"""
    for lang in ("de", "fr", "it"):
        expected = corpus.store.frame(full, [lang]).rows()
        assert corpus.store.frame(PREVIEW_SQL, [lang]).rows() == expected
    assert [r[4] for r in corpus.store.frame(PREVIEW_SQL, ["de"]).rows()] == [
        "a 2020 Art. 2",
        "b Art. 1",
        "b Art. 3",
        "c 1",
        "c 2",
    ]


def test_the_downloads_are_type_checked_as_a_list_of_download_results_in_one_pass(tmp_path):
    """fedlex_editions' output and parsed_articles' input are `DownloadResults`, not Dagster's
    per-element list type (6.6 ms a check at CH-PiT scale, two a language run; issue 27.2); it refuses the same."""
    with dg.instance_for_test() as instance:
        result = materialize(tmp_path, "de", instance)
    assert result.success
    downloads = result.output_for_node("fedlex_editions")
    assert downloads and dg.check_dagster_type(DownloadResults, downloads).success
    assert not dg.check_dagster_type(DownloadResults, [*downloads, "not a result"]).success
    assert not dg.check_dagster_type(DownloadResults, tuple(downloads)).success
    assert not dg.check_dagster_type(DownloadResults, None).success
    assert fedlex_editions.op.outs["result"].dagster_type is DownloadResults
    assert parsed_articles.op.ins["fedlex_editions"].dagster_type is DownloadResults
