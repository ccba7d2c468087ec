"""Receipts: what a result line can be checked against later, by hash (R3, issue 5 point 5).

A reader holding the item and the published context cache can recompute every
hash and confirm that the model saw exactly that text, and that the answer was
scored against exactly that gold and distractor.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime


def sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_json(value) -> str | None:
    """Hash of a JSON value in canonical form (sorted keys, no whitespace), e.g. a message list."""
    if value is None:
        return None
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256_text(canonical)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def receipt(
    item: dict,
    *,
    contexts: list[str],
    prompt: list[dict] | None,
    settings: dict,
    started_at: str,
    finished_at: str,
) -> dict:
    return {
        "context_sha256": [sha256_text(t) for t in contexts],
        "gold_sha256": sha256_text(item["gold"]["text"]),
        "distractor_sha256": sha256_text(item["distractor"]["text"]),
        "prompt_sha256": sha256_json(prompt),
        "settings": settings,
        "started_at": started_at,
        "finished_at": finished_at,
    }
