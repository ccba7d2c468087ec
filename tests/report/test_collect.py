"""The report reads only answers to items of the current core split."""

import json

from chpit_assets.report.collect import collect_scored


def write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_answers_to_items_of_an_earlier_build_are_left_out(tmp_path):
    results, build = tmp_path / "results", tmp_path / "build"
    write(build / "core-de.jsonl", [{"id": "a"}, {"id": "b"}])
    write(results / "oracle" / "de.scored.jsonl", [{"id": "a"}, {"id": "b"}])
    write(results / "smollm2-135m" / "pit" / "de.scored.jsonl", [{"id": "a"}, {"id": "gone"}])
    write(results / "recite" / "fr.scored.jsonl", [{"id": "x"}])  # no French core at all
    scored = collect_scored(results, build)
    assert {k: [line["id"] for line in v] for k, v in scored.items()} == {
        "oracle": ["a", "b"],
        "recite": [],
        "smollm2-135m/pit": ["a"],
    }


def test_a_markdown_cell_cannot_break_its_table():
    from chpit_assets.markdown import table

    lines = table(["a", "b"], [("x|y", "one\ntwo")]).splitlines()
    assert lines == ["| a | b |", "|---|---|", "| x\\|y | one ⏎ two |"]
