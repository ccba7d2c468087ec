"""The checks' memo of per-line facts: remembered facts equal fresh ones, a changed line is checked
again, and a memo that is damaged, malformed or from other code is refused whole."""

from __future__ import annotations

import hashlib
import json

import pytest

from chpit_assets.bench import check_memo
from chpit_assets.bench.check_memo import check_lines, memo_path, read_memo, write_memo
from chpit_assets.bench.eligibility import TextMemo
from chpit_assets.bench.files import item_line
from chpit_assets.bench.items import stamp_core
from chpit_assets.bench.validate import item_facts
from chpit_assets.files import sealed_bytes

from .conftest import long_text
from .test_validate import item


def _row(it: dict, core: bool = False) -> bytes:
    """The item's line as written, its core flag stamped."""
    return stamp_core(item_line({**it, "core": False}).encode(), core)


def _items() -> list[dict]:
    return [
        item("a"),
        item("b", e_id="art_2"),
        item("late", as_of="2025-01-01"),  # misdated
        item(
            "same", gold_text=long_text("Gleich."), distractor_text=long_text("Gleich.", "Mehr Text als vorher hier.")
        ),
    ]


def _fresh(items: list[dict]) -> list[dict]:
    texts = TextMemo()
    return [item_facts(i, texts) for i in items]


@pytest.fixture
def memo(tmp_path):
    return memo_path(tmp_path, "de")


def test_remembered_facts_equal_fresh_ones(memo):
    items = _items()
    rows = [_row(i, core=n % 2 == 0) for n, i in enumerate(items)]
    first = check_lines(rows, memo, set())
    assert (first.checked_now, first.refused) == (len(items), None)
    assert first.facts == _fresh(items)
    assert [f["id"] for f in first.facts if not f["dated"]] == ["late"]
    assert [f["id"] for f in first.facts if not f["discriminable"]] == ["same"]
    # Core flags moved (B16 redraws them): the lines as stored are the same, nothing is checked again.
    again = check_lines([_row(i, core=n % 2 == 1) for n, i in enumerate(items)], memo, set())
    assert (again.checked_now, again.facts) == (0, first.facts)


def test_a_changed_line_is_checked_again_and_the_memo_keeps_only_current_lines(memo):
    items = _items()
    check_lines([_row(i) for i in items], memo, set())
    items[0] = item("a", as_of="2025-01-01")  # same id, now misdated: other bytes
    second = check_lines([_row(i) for i in items], memo, set())
    assert second.checked_now == 1
    assert [f["id"] for f in second.facts if not f["dated"]] == ["a", "late"]
    assert second.facts == _fresh(items)
    assert set(read_memo(memo)) == {hashlib.sha256(_row(i)).hexdigest() for i in items}


def test_published_items_are_decoded_whole_even_when_remembered(memo):
    items = _items()
    rows = [_row(i) for i in items]
    check_lines(rows, memo, set())
    checked = check_lines(rows, memo, {"b"})
    assert checked.checked_now == 0
    assert checked.published == [{**items[1], "core": False}]


def _rewrite(memo, edit) -> None:
    """Edit the memo's head and entries and seal them again (only the content is wrong)."""
    head_line, body, _ = memo.read_text().split("\n")
    head, entries = json.loads(head_line), json.loads(body)
    edit(head, entries)
    head.pop("sha256")
    memo.write_bytes(sealed_bytes(head, entries))


def _flip_late_verdict(memo) -> None:
    """Bit rot that happens to turn the misdated item's verdict into a pass."""
    memo.write_bytes(
        memo.read_bytes().replace(b'"late",1,"art_1","2025-01-01",false', b'"late",1,"art_1","2025-01-01",true ')
    )


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_flip_late_verdict, "sha256"),
        (lambda memo: memo.write_bytes(memo.read_bytes()[:-10]), "is not a checks memo"),
        (lambda memo: memo.write_bytes(b"\x00garbage"), "is not a checks memo"),
        (lambda memo: memo.write_bytes(b"[]\n{}\n"), "is not a checks memo"),
        (lambda memo: _rewrite(memo, lambda head, facts: head.update(rules="0" * 16)), "rules '0000000000000000'"),
        (lambda memo: _rewrite(memo, lambda head, facts: head.pop("rules")), "rules None"),
        (lambda memo: _rewrite(memo, lambda head, facts: facts.update(x=[1, 2])), "malformed"),
        (lambda memo: _rewrite(memo, lambda head, facts: facts.update(x=7)), "malformed"),
        (
            lambda memo: _rewrite(memo, lambda head, facts: [v.__setitem__(4, "yes") for v in facts.values()]),
            "not true or false",
        ),
    ],
)
def test_a_damaged_memo_is_refused_whole(memo, damage, reason):
    items = _items()
    rows = [_row(i) for i in items]
    check_lines(rows, memo, set())
    damage(memo)
    checked = check_lines(rows, memo, set())
    assert checked.refused is not None and reason in checked.refused
    assert checked.checked_now == len(items)
    assert checked.facts == _fresh(items)  # the misdated item still fails
    assert check_lines(rows, memo, set()).refused is None  # rewritten sound


def test_the_memo_names_its_rules(memo):
    write_memo(memo, {})
    assert json.loads(memo.read_bytes().split(b"\n")[0])["rules"] == check_memo.RULES
