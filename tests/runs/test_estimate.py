"""PROTOCOL §7 estimate, per mode, with characters and tokens kept apart; §8 run report keys."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from chpit_assets.pit import TOOL_SPECS
from chpit_assets.runs.run_report import ModelRun, run_report
from chpit_assets.runs.systems import (
    AGENTIC_SYSTEM_PROMPT,
    CLOSED_SYSTEM_PROMPT,
    CONTEXT_SYSTEM_PROMPT,
    estimate_tokens,
)

text = st.text(min_size=0, max_size=400)


@given(question=text, gold=text)
def test_each_mode_prices_characters_over_four_as_published(question, gold):
    item = {"question": question, "gold": {"text": gold}}
    out = math.ceil(len(gold) / 4) + 50
    assert estimate_tokens("closed", item) == (math.ceil(len(CLOSED_SYSTEM_PROMPT + question) / 4), out)
    # current/pit add 40 CHARACTERS before the division (the published 581,333 input tokens)
    context = math.ceil((len(CONTEXT_SYSTEM_PROMPT + question + gold) + 40) / 4)
    assert estimate_tokens("current", item) == estimate_tokens("pit", item) == (context, out)
    schema = math.ceil(len(json.dumps(TOOL_SPECS)) / 4)
    base = math.ceil(len(AGENTIC_SYSTEM_PROMPT + question) / 4) + schema
    per_round = math.ceil((len(gold) + 400) / 4)
    assert estimate_tokens("agentic", item) == (sum(base + r * per_round for r in range(4)), out + 180)
    assert estimate_tokens("recite", item) == (0, 0)


def test_forty_characters_are_ten_tokens_not_forty():
    item = {"question": "q" * 3, "gold": {"text": ""}}
    chars = len(CONTEXT_SYSTEM_PROMPT) + 3
    assert estimate_tokens("current", item)[0] == math.ceil((chars + 40) / 4) < math.ceil(chars / 4) + 40


def _line(item_id: str, model: str, error: str | None = None) -> dict:
    line = {"id": item_id, "model": model, "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.0}
    line["receipt"] = {"price_per_mtok": {"in": 1.0, "out": 2.0}, "started_at": "s", "finished_at": "f"}
    return {**line, "error": error} if error else line


def test_the_run_report_is_keyed_by_the_model_slug_and_counts_lines_with_an_error_key():
    items = [{"id": i, "question": "q", "gold": {"text": "g" * 40}} for i in ("a", "b")]
    slug = "anthropic/claude-sonnet-5"
    lines = [_line("a", slug), _line("b", slug, "ModelCallError: HTTP 500")]
    report = run_report("closed", [ModelRun(slug=slug, items=items, lines=lines)], {})
    assert list(report["estimate"]) == [slug, "total_usd"] and list(report["actual"]) == [slug]
    assert report["estimate"]["total_usd"] == report["estimate"][slug]["usd"] > 0
    assert (report["actual"][slug]["answered"], report["actual"][slug]["errors"]) == (1, 1)
