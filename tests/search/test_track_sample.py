"""The search track on the real sample build: deterministic, valid items, and the oracle scores 1.000."""

from __future__ import annotations

from datetime import date

from chpit_assets.bench.files import jsonl_bytes
from chpit_assets.bench.validate import duplicate_ids, misdated
from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.runner import load_log, run_items
from chpit_assets.runs.systems import build_system
from chpit_assets.search.track import StoreEditions, build_track
from tests.runs.conftest import build_sample


def test_the_search_track_builds_deterministically_and_the_oracle_scores_one(tmp_path):
    sample = build_sample(tmp_path / "a")
    items = sample.items["de"] + sample.items["fr"]
    with sample.store.connect(read_only=True) as con:
        first = build_track(items, StoreEditions(con))
        second = build_track(list(reversed(items)), StoreEditions(con))
    assert jsonl_bytes(first.items) == jsonl_bytes(second.items) and first.items
    assert len(first.items) + sum(first.skipped.values()) == len(items)
    assert duplicate_ids(first.items) == [] and misdated(first.items) == []
    assert not {i["id"] for i in first.items} & {i["id"] for i in items}  # never a core/full id
    for item in first.items:
        assert f"Art. {item['article_number']} " not in item["question"] and item["phrase"] in item["question"]
    path = tmp_path / "oracle.jsonl"
    run_items(build_system("oracle", tools=PitTools(sample.store, today=date(2026, 9, 4))), first.items, path)
    assert {line["verdict"]["label"] for line in load_log(path).values()} == {"grounded_correct"}
