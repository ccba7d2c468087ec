"""The gate's own oracle over everything it publishes (R1; issue 15 point 1).

The runs' oracle (`oracle_gate`) proves builder and scorer agree on the core split. The gate must
prove more: that every item it is about to publish, core or not, carries the store's text. So it
looks every item of the candidate up again the oracle's way (`runs.systems.OracleSystem`: by
act_id, e_id and as_of through the point-in-time tools) and scores it with chpit_scorer; anything
but grounded_correct blocks. What was checked is recorded as one sha256 per language over the
items' jsonl bytes (`content_hash`), and `publication.publish` re-reads the staged parquet shards
right before the swap and refuses unless they hash the same: a gold text changed after the
oracle ran cannot be published.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from chpit_assets.bench.files import jsonl_bytes
from chpit_assets.pit import PitError
from chpit_assets.runs.systems import OracleSystem
from chpit_scorer import score

CORRECT = "grounded_correct"


def content_hash(items: Iterable[Mapping]) -> str:
    """sha256 of the items as their jsonl bytes: the same for bench-{lang}.jsonl's items and for the
    rows read back from a shard written from them (field order is the card's in both)."""
    return hashlib.sha256(jsonl_bytes(items)).hexdigest()


@dataclass(frozen=True)
class OracleCheck:
    offenders: list[str]  # "<lang>: <id>: <why>", empty when every item is grounded_correct
    checked: dict[str, str]  # lang -> content_hash of exactly the items looked up


def _texts(item: Mapping) -> tuple[str, str]:
    return item["gold"]["text"], item["distractor"]["text"]


def oracle_check(items: Mapping[str, list[dict]], tools) -> OracleCheck:
    """Look up and score every item of every language (`tools`: a `pit.tools.PitTools`, ideally in a session).

    A lookup the tools refuse (unknown act, article or date) is an offender naming the tool's
    reason; an item too malformed to look up is one too (schema_exact says what is wrong with it).
    A store failure is not an offender: it raises, and the gate cannot pass without an answer."""
    system = OracleSystem(tools)
    offenders: list[str] = []
    for lang, lang_items in items.items():
        for n, item in enumerate(lang_items):
            ident = item.get("id", f"#{n}") if isinstance(item, Mapping) else f"#{n}"
            try:
                gold, distractor = _texts(item)
                answer = system.answer(item)
            except PitError as exc:
                offenders.append(f"{lang}: {ident}: the oracle lookup failed: {exc.message}")
                continue
            except (KeyError, TypeError, AttributeError) as exc:
                offenders.append(f"{lang}: {ident}: not an item the oracle can look up ({exc!r})")
                continue
            label = score(answer.text or "", gold, distractor).label
            if label != CORRECT:
                offenders.append(
                    f"{lang}: {ident}: oracle {label}: the item's gold is not the store's text of "
                    f"{item.get('e_id')} on {item.get('as_of')}"
                )
            elif (answer.lookup or {}).get("version_id") != item["gold"].get("version_id"):
                offenders.append(
                    f"{lang}: {ident}: gold.version_id {item['gold'].get('version_id')} is not the "
                    f"edition in force on {item.get('as_of')} ({(answer.lookup or {}).get('version_id')})"
                )
    return OracleCheck(offenders, {lang: content_hash(lang_items) for lang, lang_items in items.items()})
