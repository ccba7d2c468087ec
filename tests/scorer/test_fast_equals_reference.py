"""The fast path returns exactly the reference path's verdict (every field).

Inputs are built to sit where the shortcuts could go wrong: near the 0.92
threshold (small edits of one text), past 200 characters (difflib's autojunk
kicks in and the LCS bound is loose), at tiny lengths (S5 window lengths lo
and hi still reachable), around paragraph markers and sentence breaks, and
on real article paragraphs with realistic amendment-like edits.
"""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chpit_scorer import fast as F
from chpit_scorer import reference as R
from chpit_scorer import score
from chpit_scorer.fast import _needed_similarity
from tests.scorer.fedlex_text import articles

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Few distinct characters make long common subsequences (ratios near the
# threshold) likely; markers, breaks and cosmetic characters exercise S1/S2.
ALPHABET = "aeinrst dg.;:,\n1230äß\u00ad\u2013\u00ab\u00a0"

REAL = sorted(
    {
        text
        for path in ("cc-2022-491/20250707-de.xml", "cc-2004-745/20230901-de.xml", "cc-2022-491/20250707-fr.xml")
        for text in articles(path).values()
        if 60 <= len(text) <= 1500
    }
)


@st.composite
def edited(draw, base: str, max_edits: int = 6) -> str:
    """``base`` with a few random character edits (insert, delete, replace)."""
    text = base
    for _ in range(draw(st.integers(0, max_edits))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["ins", "del", "rep"]))
        ch = draw(st.sampled_from(ALPHABET))
        if kind == "ins" or not text:
            text = text[:pos] + ch + text[pos:]
        elif kind == "del":
            text = text[:pos] + text[pos + 1 :]
        else:
            text = text[:pos] + ch + text[pos + 1 :]
    return text


@st.composite
def amended(draw, base: str) -> str:
    """A plausible amendment of a real article: number, word, clause, paragraph, sentence."""
    kind = draw(st.sampled_from(["number", "word", "clause", "paragraph", "sentence", "chars"]))
    lines = base.split("\n")
    i = draw(st.integers(0, len(lines) - 1))
    line = lines[i]
    if kind == "number":
        digits = [k for k, c in enumerate(line) if c.isdigit()]
        if digits:
            k = draw(st.sampled_from(digits))
            line = line[:k] + draw(st.sampled_from("0123456789")) + draw(st.sampled_from(["", "0"])) + line[k + 1 :]
        else:
            line = line + " innert 30 Tagen."
    elif kind == "word":
        words = line.split(" ")
        k = draw(st.integers(0, len(words) - 1))
        words[k] = draw(st.sampled_from(["Bundesrat", "Kanton", "schriftlich", "sechs", "EDÖB"]))
        line = " ".join(words)
    elif kind == "clause":
        line = line.rstrip(".") + draw(
            st.sampled_from([" und zu begründen.", ", sofern nichts anderes vereinbart ist."])
        )
    elif kind == "paragraph":
        lines.insert(i + 1, f"{i + 1}bis Der Bundesrat regelt die Einzelheiten.")
    elif kind == "sentence":
        cut = line.rfind(". ")
        line = line[: cut + 1] if cut > 0 else line
    else:
        line = draw(edited(line, 4))
    lines[i] = line
    return "\n".join(lines)


@st.composite
def answers(draw, gold: str, distractor: str) -> str:
    kind = draw(st.sampled_from(["gold", "distractor", "typo_gold", "typo_distractor", "mix", "part", "free", "long"]))
    if kind == "gold":
        return gold
    if kind == "distractor":
        return distractor
    if kind == "typo_gold":
        return draw(edited(gold, 3))
    if kind == "typo_distractor":
        return draw(edited(distractor, 3))
    if kind == "mix":
        return gold[: len(gold) // 2] + distractor[len(distractor) // 2 :]
    if kind == "part":
        start = draw(st.integers(0, len(gold)))
        return gold[start : start + draw(st.integers(0, 400))]
    if kind == "free":
        return draw(st.text(alphabet=ALPHABET, max_size=400))
    # prose around a quote, over 200 chars so autojunk also acts on windows
    return "Gemäss Artikel gilt Folgendes: " + draw(edited(gold, 2)) + " Soweit die Fassung. " * 3


def _assert_same(answer: str | None, gold: str, distractor: str) -> None:
    quick = score(answer, gold, distractor, fast=True)
    slow = score(answer, gold, distractor, fast=False)
    assert asdict(quick) == asdict(slow)


@st.composite
def synthetic_items(draw):
    paras = draw(st.lists(st.text(alphabet=ALPHABET, min_size=0, max_size=260), min_size=1, max_size=4))
    numbered = draw(st.booleans())
    gold = "\n".join(f"{k + 1} {p}" if numbered else p for k, p in enumerate(paras))
    distractor = draw(edited(gold, 8))
    return draw(answers(gold, distractor)), gold, distractor


@st.composite
def real_items(draw):
    base = draw(st.sampled_from(REAL))
    other = draw(amended(base))
    gold, distractor = (base, other) if draw(st.booleans()) else (other, base)
    return draw(answers(gold, distractor)), gold, distractor


@SETTINGS
@given(synthetic_items())
def test_fast_verdict_equals_reference_on_synthetic_texts(item):
    _assert_same(*item)


@SETTINGS
@given(real_items())
def test_fast_verdict_equals_reference_on_amended_real_articles(item):
    _assert_same(*item)


@SETTINGS
@given(st.text(alphabet=ALPHABET, max_size=400), st.integers(0, 12), st.data())
def test_fast_primitives_equal_reference(a, edits, data):
    # b is a near copy of a, so both sides of the 0.92 line are common.
    b = data.draw(edited(a, edits))
    assert F.similar(a, b) == R.similar(a, b)
    assert F.similar(b, a) == R.similar(b, a)
    host = data.draw(st.text(alphabet=ALPHABET, max_size=120)) + b + data.draw(st.text(alphabet=ALPHABET, max_size=120))
    assert F.window_found(a, host) == R.window_found(a, host)


def test_needed_similarity_is_the_exact_float_threshold():
    # The LCS pre-filter rejects s < need; that is only sound if need is the
    # first integer whose ratio s / T clears 0.92 with difflib's float math.
    for total in range(1, 5000):
        need = _needed_similarity(total)
        assert 2.0 * (need / 2) / total >= R.RATIO_THRESHOLD
        assert need == 0 or (need - 1) / total < R.RATIO_THRESHOLD


def test_empty_and_none_inputs_agree():
    for item in [("", "", ""), (None, None, None), ("x", "", "1 " + "a" * 30)]:
        _assert_same(*item)
