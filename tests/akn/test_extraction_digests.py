"""The extracted articles of every real sample file, pinned (issue 27 item 3).

`extraction_digests.json` holds, per real Fedlex file, the article count and a sha256 over every
article's fields (e_id, occurrence, article_number, heading, text; one JSON line each), computed with
the XSLT extraction of commit c07fa01, before any speed work on the parser. A faster extraction must
reproduce it byte for byte on every file; a new sample file must be pinned here too (the set of files
is compared, so it cannot be skipped silently).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from chpit_assets.akn.parser import parse_edition

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
PINNED = json.loads((Path(__file__).parent / "extraction_digests.json").read_text(encoding="utf-8"))
# not-sr/ is a Federal Gazette text: refused, not extracted (test_parser covers it).
REAL = sorted(p for p in SAMPLE.rglob("*.xml") if "not-sr" not in p.relative_to(SAMPLE).parts)


def digest(path: Path) -> dict:
    edition = parse_edition(path.read_bytes(), str(path))
    h = hashlib.sha256()
    for a in edition.articles:
        h.update(json.dumps(list(a), ensure_ascii=False).encode("utf-8") + b"\n")
    return {"articles": len(edition.articles), "sha256": h.hexdigest()}


def test_every_real_file_is_pinned():
    assert sorted(p.relative_to(SAMPLE).as_posix() for p in REAL) == sorted(PINNED)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.relative_to(SAMPLE).as_posix())
def test_extraction_is_byte_identical_to_the_pinned_one(path: Path):
    assert digest(path) == PINNED[path.relative_to(SAMPLE).as_posix()]
