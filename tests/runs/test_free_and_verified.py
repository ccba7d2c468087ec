"""Issue 16's systems: model-free cite/current, cite/pit, search/pit on the real sample build, and
the cite-or-abstain wrapper (`<slug>/pit+verify`) against a scripted loopback model."""

from __future__ import annotations

import json
import re

import pytest

from chpit_assets.pit.tools import PitTools
from chpit_assets.runs.client import NO_RETRY, ChatClient, EndpointConfig
from chpit_assets.runs.errors import QuestionNotUnderstood, UnknownSystemError
from chpit_assets.runs.runner import load_log, read_log, run_items
from chpit_assets.runs.systems import FREE_SYSTEMS, build_system, parse_system_key
from chpit_assets.search.index import build_index

from .conftest import TODAY, completion


@pytest.fixture(scope="module")
def search_tools(sample, tmp_path_factory) -> PitTools:
    search_dir = tmp_path_factory.mktemp("search")
    with sample.store.connect(read_only=True) as con:
        for lang in ("de", "fr"):
            build_index(con, lang, search_dir)
    return PitTools(sample.store, today=TODAY, search_dir=search_dir)


def _items(sample) -> list[dict]:
    return sample.items["de"] + sample.items["fr"]


def _labels(system, items, path) -> dict[str, str]:
    run_items(system, items, path)
    return {i: line["verdict"]["label"] for i, line in load_log(path).items()}


def test_free_system_keys_need_no_model_and_cannot_be_taken_as_slugs():
    for key in FREE_SYSTEMS:
        assert parse_system_key(key).slug is None and parse_system_key(key).mode == key
    with pytest.raises(UnknownSystemError):
        parse_system_key("cite/closed")
    assert parse_system_key("gpt/pit+verify").base_mode == "pit"
    assert parse_system_key("gpt/agentic+search+verify").base_mode == "agentic"


def test_cite_pit_reads_the_question_and_scores_one_on_every_language(sample, search_tools, tmp_path):
    items = _items(sample)
    assert {i["lang"] for i in items} == {"de", "fr"}
    labels = _labels(build_system("cite/pit", tools=search_tools), items, tmp_path / "cite.jsonl")
    assert len(labels) == len(items) and set(labels.values()) == {"grounded_correct"}


def test_cite_current_labels_equal_recites(sample, search_tools, tmp_path):
    items = _items(sample)
    cite = _labels(build_system("cite/current", tools=search_tools), items, tmp_path / "cc.jsonl")
    recite = _labels(build_system("recite", tools=search_tools), items, tmp_path / "r.jsonl")
    assert cite == recite and "grounded_wrong_version" in cite.values()


def test_search_pit_answers_from_the_question_text_alone(sample, search_tools, tmp_path):
    items = _items(sample)
    # The item's fields are not read: blank them all but id, lang, question, gold and distractor.
    blind = [
        {
            k: v
            for k, v in i.items()
            if k in ("id", "lang", "question", "gold", "distractor", "kind", "gold_is_current", "as_of")
        }
        for i in items
    ]
    path = tmp_path / "search.jsonl"
    run_items(build_system("search/pit", tools=search_tools), blind, path)
    labels = {i: line["verdict"]["label"] for i, line in load_log(path).items()}
    assert set(labels.values()) == {"grounded_correct"}


def test_a_question_without_a_citation_is_an_error_line_for_cite(sample, search_tools, tmp_path):
    item = {**sample.items["de"][0], "question": "Was gilt beim Datenschutz?"}
    system = build_system("cite/pit", tools=search_tools)
    with pytest.raises(QuestionNotUnderstood):
        system.answer(item)
    run_items(system, [item], tmp_path / "e.jsonl")
    assert "QuestionNotUnderstood" in load_log(tmp_path / "e.jsonl")[item["id"]]["error"]


# --------------------------------------------------------------------------- issue 27.4: batched lookups


def _timeless(path) -> list[str]:
    """A run log's lines as written, less what a clock decides (latency, start and end)."""
    out = []
    for line in read_log(path):
        line.pop("latency_s")
        for key in ("started_at", "finished_at"):
            line["receipt"].pop(key)
        out.append(json.dumps(line, ensure_ascii=False))
    return out


def _with_misses(sample) -> list[dict]:
    """The sample's de and fr items, and copies no lookup can answer: a date before every edition,
    an article no edition has (in the question too, which cite and search read)."""
    items = _items(sample)
    early = [{**i, "id": i["id"] + "-early", "as_of": "1900-01-01"} for i in items[:3]]
    for i in early:
        i["question"] = re.sub(r"\b(19|20)\d\d\b", "1900", i["question"])
    absent = [
        {
            **i,
            "id": i["id"] + "-absent",
            "article_number": "9999",
            "e_id": "art_9999",
            "question": re.sub(r"(?i)\b(art\.?)\s*\d+\w*", r"\1 9999", i["question"], count=1),
        }
        for i in items[:3]
    ]
    return items + early + absent


@pytest.mark.parametrize("key", ["oracle", "recite", *FREE_SYSTEMS])
def test_a_session_answers_every_line_as_the_per_call_lookups_do(sample, search_tools, tmp_path, key):
    """Inside a session the tools read rows through a LookupCache (per language, per edition) instead
    of four queries per call; every line, misses and their messages included, must stay what the
    per-call path writes, which is today's code path unchanged."""
    items = _with_misses(sample)
    system = build_system(key, tools=search_tools)
    run_items(system, items, tmp_path / "per-call.jsonl", workers=2)
    with search_tools.session():
        run_items(system, items, tmp_path / "session.jsonl", workers=2)
        queries = search_tools._cache.queries
    per_call = _timeless(tmp_path / "per-call.jsonl")
    assert len(per_call) == len(items)
    # The lookups' misses are error lines (the early ones too where the date is read); search answers
    # them from its text strategies instead.
    assert key == "search/pit" or sum('"error"' in line for line in per_call) >= 3
    # Two workers finish in any order: compare by id, each line byte for byte.
    assert sorted(_timeless(tmp_path / "session.jsonl")) == sorted(per_call)
    assert queries <= 3 * 2 + len(items)  # two languages' tables, then at most one read per item


# --------------------------------------------------------------------------- cite or abstain, scripted model


def _verified(server, tools):
    client = ChatClient(EndpointConfig(server.base_url, "scripted-model", retry=NO_RETRY))
    return build_system("scripted/pit+verify", tools=tools, clients={"scripted": client})


def _pit_item(sample):
    """DSG Art. 24 after the 2025-04-01 change (para. 5bis added): gold is the new text."""
    return next(i for i in sample.items["de"] if i["e_id"] == "art_24" and i["kind"] == "after")


def _answer(sample, search_tools, tmp_path, scripted, text):
    item = _pit_item(sample)
    server = scripted(lambda body: (200, completion(text)))
    path = tmp_path / "v.jsonl"
    run_items(_verified(server, search_tools), [item], path)
    return item, load_log(path)[item["id"]], server


def test_a_verbatim_gold_answer_survives_whole(sample, search_tools, tmp_path, scripted):
    item = _pit_item(sample)
    gold = item["gold"]["text"]
    _, line, server = _answer(sample, search_tools, tmp_path, scripted, gold)
    assert line["answer"] == gold and line["abstained"] is False
    assert line["verdict"]["label"] == "grounded_correct"
    assert line["verification"]["verified_citations"] == [f"SR {item['sr_number']} Art. 24"]
    assert "<context>" in server.hits[0]["messages"][1]["content"]  # the pit prompt, unchanged by the wrapper


def test_an_invented_sentence_is_removed(sample, search_tools, tmp_path, scripted):
    gold = _pit_item(sample)["gold"]["text"]
    invented = "Der EDÖB erhebt für jede Meldung eine Gebühr von 500 Franken."
    _, line, _ = _answer(sample, search_tools, tmp_path, scripted, gold + "\n" + invented)
    assert invented not in line["answer"] and line["answer"] == gold and not line["abstained"]
    assert [c["kept"] for c in line["verification"]["checks"] if c["sentence"] == invented] == [False]


def test_a_wrong_article_citation_is_removed(sample, search_tools, tmp_path, scripted):
    gold = _pit_item(sample)["gold"]["text"]
    _, line, _ = _answer(sample, search_tools, tmp_path, scripted, "Art. 99 DSG bestimmt Folgendes.\n" + gold)
    claim = next(c for c in line["verification"]["checks"] if c["sentence"].startswith("Art. 99"))
    assert not claim["kept"] and not claim["cites_verified"]
    assert "Art. 99" not in line["answer"] and line["answer"] == gold
    assert any("Art. 99" in m for m in line["verification"]["evidence_missing"])


def test_an_answer_with_nothing_verifiable_abstains(sample, search_tools, tmp_path, scripted):
    _, line, _ = _answer(sample, search_tools, tmp_path, scripted, "Art. 30 BV legt den Höchstpreis für Brot fest.")
    assert line["abstained"] is True and line["answer"] == ""
    assert line["verdict"]["label"] == "ungrounded" and "error" not in line
