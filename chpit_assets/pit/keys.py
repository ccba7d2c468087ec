"""Comparison forms of the two names a caller spells freely: SR numbers and article numbers.

Shared by the tools (which read a model's arguments this way) and the report (which scores a
logged call as "right act and article" the same way, PROTOCOL §5)."""

from __future__ import annotations

import re

_ART_PREFIX = re.compile(r"^(?:art(?:icle|ikel|icolo)?\.?|§)\s*", re.IGNORECASE)
_SR_PREFIX = re.compile(r"^(?:sr|rs)\s+", re.IGNORECASE)

# The same comparison form as `article_key`, in SQL, applied to the stored column (stored numbers
# carry no "Art." prefix).
ARTICLE_KEY_SQL = "lower(replace(article_number, ' ', ''))"


def article_key(article_number: str) -> str:
    """No "Art." prefix, no spaces, lower case: "Art. 268a bis" -> "268abis"."""
    return re.sub(r"\s+", "", _ART_PREFIX.sub("", article_number.strip())).lower()


def sr_key(sr_number: str) -> str:
    """No "SR"/"RS" prefix, trimmed: "SR 235.1 " -> "235.1"."""
    return _SR_PREFIX.sub("", str(sr_number).strip())
