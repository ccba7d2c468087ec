"""Issue 23 item 4: what the gate is told about a build that is not whole and clean."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import Catalog, load_sample_catalog
from chpit_assets.publish.whole_build import errored_lines, failed_editions, unstamped

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
APRIL = "https://fedlex.data.admin.ch/eli/cc/2022/491/20250401"


def test_an_edition_failing_its_sha256_is_named_with_act_edition_file_and_cause(tmp_path):
    catalog = load_sample_catalog(SAMPLE)
    store = Store(tmp_path / "chpit.duckdb")
    assert ingest_language(store, catalog, "de", tmp_path / "cache").failures_by_stage() == {"no_file": 1}
    assert failed_editions(store) == []  # Fedlex listing no file for an edition is not a failure
    bad = Catalog(
        catalog.acts,
        tuple(
            dataclasses.replace(e, sha256="0" * 64) if (e.consolidation, e.lang) == (APRIL, "de") else e
            for e in catalog.editions
        ),
    )
    ingest_language(store, bad, "de", tmp_path / "other-cache")
    (offender,) = failed_editions(store)
    assert offender.startswith(f"de: SR 235.1 {APRIL} (file://") and "20250401-de.xml" in offender
    assert ": validate: " in offender and "!= catalog 0000" in offender and "last good file is kept" in offender
    never_parsed = Store(tmp_path / "fresh.duckdb")
    ingest_language(never_parsed, bad, "de", tmp_path / "other-cache")
    (offender,) = failed_editions(never_parsed)
    assert offender.startswith(f"de: SR 235.1 {APRIL} (file://") and ": validate: " in offender


def test_errored_lines_of_every_system_are_named_by_system_language_and_item(tmp_path):
    for system, lines in {
        "oracle": [{"id": "a", "error": None}],
        "cite/pit": [{"id": "b", "error": None}, {"id": "c", "error": "TimeoutError: read"}],
        # The tool found no such article today: the system's (wrong) answer, not a failure to run it.
        "cite/current": [{"id": "d", "error": "UnknownArticle: SR 235.1 has no article 99 on 2025-09-01"}],
        "search/pit": [{"id": "e", "error": "NoSearchIndex: no search index for 'fr'"}],
    }.items():
        (tmp_path / system).mkdir(parents=True)
        (tmp_path / system / "fr.scored.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    # A run log's raw lines and a superseded log are not what is published.
    (tmp_path / "oracle" / "fr.jsonl").write_text(json.dumps({"id": "a", "error": "old"}) + "\n")
    assert errored_lines(tmp_path) == [
        "cite/pit/fr: c: TimeoutError: read",
        "search/pit/fr: e: NoSearchIndex: no search index for 'fr'",
    ]


def _recite(results: Path, lang: str, lines: list[dict]) -> None:
    (results / "recite").mkdir(parents=True, exist_ok=True)
    (results / "recite" / f"{lang}.scored.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_an_item_a_recite_run_did_not_stamp_is_named_a_tool_miss_is_the_cards_null(tmp_path):
    items = {"de": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}], "fr": [{"id": "f"}], "it": []}
    _recite(
        tmp_path,
        "de",
        [
            {"id": "a", "error": None},
            {"id": "b", "error": "UnknownArticle: SR 1 has no article 5 today"},  # the card's legitimate null
            {"id": "c", "error": "OSError: store unreadable"},
        ],
    )
    assert unstamped(items, tmp_path) == [
        "de: c: recite line failed (OSError: store unreadable), so no recite stamp",
        "de: d: no recite line, so no recite stamp",
    ]  # fr has no recite run at all: its stamps are null throughout, as for a model-only run
