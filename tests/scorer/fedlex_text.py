"""Real article texts from the Fedlex sample, for scorer tests and the benchmark.

Read with the pipeline's own parser, so the scorer is tested on exactly the text
layout the builder ships as `gold.text` (one numbered paragraph per line, S2).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from chpit_assets.akn.parser import parse_edition

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"


@cache
def articles(relpath: str) -> dict[str, str]:
    """``{eId: text}`` for every article of one sample file that has text."""
    edition = parse_edition((SAMPLE / relpath).read_bytes(), relpath)
    return {a.e_id: a.text for a in edition.articles if a.text}
