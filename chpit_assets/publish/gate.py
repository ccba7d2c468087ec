"""The publication gate: the CRITICAL checks that must all pass before anything is published.

After the neighbouring case-law system's nightly gate (L4): a CRITICAL subset of the data checks
runs before the swap; if one fails the swap is refused and yesterday's publication stays live.
Each check returns its offenders as readable strings naming the language and item ids, so a
failed gate says exactly what to look at. Where the builder already has the rule, the same
domain function is called (`validate.duplicate_ids`, `frozen.changed_items`; the oracle's
`oracle_failures` is passed in by the Dagster layer), never a second implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chpit_assets.bench.frozen import changed_items
from chpit_assets.bench.items import ITEM_CAP
from chpit_assets.bench.validate import duplicate_ids
from chpit_assets.synthetic import is_synthetic_eli, is_synthetic_sr

from .candidate import Candidate
from .oracle import OracleCheck, content_hash
from .schema import schema_errors

ActCounts = dict[int | None, tuple[str, int]]  # None: an item without act_id (schema_exact reports it)

CRITICAL_CHECKS: dict[str, str] = {
    "oracle_one": "R1: the oracle scored 1.000 grounded_correct, 0 errors, on exactly the core items to publish.",
    "oracle_published": "R1 on every item to publish (core or not): the gate's own lookup by act_id, e_id and "
    "as_of returns the item's gold text and edition; the shards are re-checked against "
    "a sha256 per language of what it looked up, right before the swap.",
    "ids_unique": "B17: item ids are unique within each language.",
    "published_items_frozen": "B18: every item of the frozen record (frozen/{lang}.jsonl) is published unchanged.",
    "item_counts_in_bounds": "Per-language item counts within the configured bounds: the absolute floor "
    "(min_items), the cap (max_items), no act losing all its items and a language "
    "losing at most min(max_drop_share, max_drop_items) of the previous "
    "publication's items; and equal to build-report.json.",
    "texts_not_empty": "Every item has a non-empty question, gold.text and distractor.text.",
    "schema_exact": "Every item has exactly the card's fields, in order, with the card's types.",
    "no_synthetic_acts": "No item comes from a synthetic act (synthetic ELI host or SR range).",
    "editions_all_parsed": "Every catalog edition with a file was parsed from its current file in the last "
    "ingest: none failed or was refused (download, validate, parse, cache), none is on its last good file.",
    "system_lines_clean": "No scored result line of any system records an error.",
    "recite_stamped": "Every item to publish of a language with a recite run has its recite line, and that "
    "line did not fail (a point-in-time tool's miss is the card's null stamp).",
}


@dataclass(frozen=True)
class CountBounds:
    """Defaults fit the shipped sample: German must have items and no language may exceed the B14
    cap. Against the live publication, no act may lose all its items and a language may lose at
    most min(1% of its items, 25) -- at 5,000 items a bad edition can hide at most 25 removals, and
    on the sample's 9 not one (issue 15 point 4). A language that never had items is simply not
    published. A release sets its own floors, e.g. {"de": 4500, "fr": 4500, "it": 4500}."""

    min_items: Mapping[str, int] = field(default_factory=lambda: {"de": 1})
    max_items: int = ITEM_CAP
    max_drop_share: float = 0.01
    max_drop_items: int = 25

    def allowed_drop(self, before: int) -> float:
        return min(self.max_drop_share * before, self.max_drop_items)


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    offenders: list[str]  # "<lang>: <id or count>: <why>", empty when the check passed

    @property
    def passed(self) -> bool:
        return not self.offenders

    @property
    def description(self) -> str:
        return CRITICAL_CHECKS[self.name]


@dataclass(frozen=True)
class GateReport:
    candidate_digest: str
    outcomes: list[CheckOutcome]
    checked: dict[str, str] = field(default_factory=dict)  # lang -> sha256 of the items the oracle looked up
    count_changes: list[str] = field(default_factory=list)  # every act and language whose item count changed

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    def summary(self) -> str:
        failed = [o for o in self.outcomes if not o.passed]
        if not failed:
            return f"gate passed: {len(self.outcomes)} critical checks"
        return "gate FAILED: " + "; ".join(f"{o.name} ({', '.join(o.offenders[:3])})" for o in failed)


def _keyed(items: list[dict]) -> list[dict]:
    """Items with a string id; the others are reported by schema_exact, not crashed on here."""
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]


def _edition(item: dict, side: str) -> dict:
    value = item.get(side)
    return value if isinstance(value, dict) else {}


def _oracle(candidate: Candidate, failures: list[str], scored_ids: Mapping[str, set[str]]) -> list[str]:
    out = list(failures)
    for lang in candidate.published_langs:
        unscored = sorted({i["id"] for i in _keyed(candidate.core(lang))} - scored_ids.get(lang, set()))
        if unscored:
            out.append(f"{lang}: {len(unscored)} core items without an oracle verdict, e.g. {unscored[:5]}")
    return out


def act_counts(items: list[dict]) -> ActCounts:
    """{act_id: (label, items)} of one language's items; the label names the act for a reader."""
    counts: ActCounts = {}
    for item in items:
        act_id = item.get("act_id")
        n = counts.get(act_id, ("", 0))[1]
        counts[act_id] = (f"SR {item.get('sr_number')} {item.get('abbreviation')} (act_id {act_id})", n + 1)
    return counts


def _counts(
    candidate: Candidate, previous: Mapping[str, ActCounts], bounds: CountBounds
) -> tuple[list[str], list[str]]:
    """(offenders, changes): changes lists every language and act whose count moved, passed or not."""
    out, changes = [], []
    for lang in dict.fromkeys([*candidate.items, *bounds.min_items, *previous]):
        now_acts, before_acts = act_counts(candidate.items.get(lang, [])), previous.get(lang, {})
        n, before = sum(c for _, c in now_acts.values()), sum(c for _, c in before_acts.values())
        floor = bounds.min_items.get(lang, 0)
        if n < floor:
            out.append(f"{lang}: {n} items, below the floor of {floor}")
        if n > bounds.max_items:
            out.append(f"{lang}: {n} items, above the maximum of {bounds.max_items}")
        if before - n > bounds.allowed_drop(before):
            out.append(
                f"{lang}: {n} items, the previous publication had {before}: {before - n} fewer, more than "
                f"the {bounds.allowed_drop(before):g} allowed (min({bounds.max_drop_share:.0%}, "
                f"{bounds.max_drop_items}))"
            )
        if n != before:
            changes.append(f"{lang}: {before} -> {n} items")
        for act_id in sorted(set(now_acts) | set(before_acts), key=str):
            label = (now_acts.get(act_id) or before_acts[act_id])[0]
            was, now = before_acts.get(act_id, ("", 0))[1], now_acts.get(act_id, ("", 0))[1]
            if was and not now:
                out.append(f"{lang}: {label}: all {was} items lost")
            if was != now:
                changes.append(f"{lang}: {label}: {was} -> {now} items")
        reported = candidate.build_report.get(lang, {}).get("items", 0)
        if lang in candidate.items and reported != n:
            out.append(f"{lang}: build-report.json says {reported} items, bench-{lang}.jsonl has {n}")
    return out, changes


def _empty_texts(lang: str, items: list[dict]) -> list[str]:
    out = []
    for item in items:
        texts = {
            "question": item.get("question"),
            "gold.text": _edition(item, "gold").get("text"),
            "distractor.text": _edition(item, "distractor").get("text"),
        }
        empty = [k for k, v in texts.items() if not isinstance(v, str) or not v.strip()]
        if empty:
            out.append(f"{lang}: {item.get('id')}: empty {', '.join(empty)}")
    return out


def _synthetic(lang: str, items: list[dict]) -> list[str]:
    out = []
    for item in items:
        elis = [_edition(item, side).get("eli") for side in ("gold", "distractor")]
        sr = item.get("sr_number")
        if any(is_synthetic_eli(e) for e in elis if isinstance(e, str)) or (
            isinstance(sr, str) and is_synthetic_sr(sr)
        ):
            out.append(f"{lang}: {item.get('id')}: synthetic act (SR {sr}, {elis[0]})")
    return out


def evaluate_gate(
    candidate: Candidate,
    *,
    failed_editions: Sequence[str],
    errored_lines: Sequence[str],
    unstamped: Sequence[str],
    oracle_failures: list[str],
    oracle_scored_ids: Mapping[str, set[str]],
    published_oracle: OracleCheck,
    frozen: Mapping[str, list[dict]],
    previous_acts: Mapping[str, ActCounts],
    bounds: CountBounds = CountBounds(),
) -> GateReport:
    """Every CRITICAL check over the candidate, in `CRITICAL_CHECKS` order.

    `failed_editions`, `errored_lines`, `unstamped`: what `whole_build` found in the store and the results
    (issue 23 item 4: only a whole, clean build is published); `oracle_failures`: the runs'
    `oracle_failures` reasons; `oracle_scored_ids`: per language the ids
    the oracle scored (so the published core is exactly what it proved); `published_oracle`: the
    gate's own oracle over this candidate's items (`oracle.oracle_check`); `frozen`: the B18 record
    per language; `previous_acts`: per language {act_id: (label, items)} of the live publication."""
    found: dict[str, list[str]] = {name: [] for name in CRITICAL_CHECKS}
    found["oracle_one"] = _oracle(candidate, oracle_failures, oracle_scored_ids)
    found["oracle_published"] = list(published_oracle.offenders)
    if published_oracle.checked != {lang: content_hash(items) for lang, items in candidate.items.items()}:
        found["oracle_published"].append("the oracle looked up other items than this candidate's")
    found["item_counts_in_bounds"], changes = _counts(candidate, previous_acts, bounds)
    found["editions_all_parsed"] = list(failed_editions)
    found["system_lines_clean"] = list(errored_lines)
    found["recite_stamped"] = list(unstamped)
    for lang, items in candidate.items.items():
        keyed = _keyed(items)
        found["ids_unique"] += [f"{lang}: {i}: duplicate id" for i in duplicate_ids(keyed)]
        found["published_items_frozen"] += [
            f"{lang}: {i}: published, but missing or changed" for i in changed_items(frozen.get(lang, []), keyed)
        ]
        found["texts_not_empty"] += _empty_texts(lang, keyed)
        found["schema_exact"] += [f"{lang}: {e}" for e in schema_errors(items)]
        found["no_synthetic_acts"] += _synthetic(lang, keyed)
    return GateReport(
        candidate.digest(),
        [CheckOutcome(name, found[name]) for name in CRITICAL_CHECKS],
        dict(published_oracle.checked),
        changes,
    )
