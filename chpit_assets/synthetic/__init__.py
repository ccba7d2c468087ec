"""Synthetic Fedlex-shaped corpora for scale tests and benchmarks (issue 7), labelled so they can never pass
for real law.

Every act the generator writes carries three independent marks, so losing one (a copied file, a renamed
folder) still leaves the others:

* its ELIs live on `SYNTHETIC_HOST`, a reserved `.invalid` name (RFC 2606) that no real Fedlex URI uses and
  no resolver answers: `https://synthetic.chpit.invalid/eli/cc/<year>/<n>[/<YYYYMMDD>]`;
* its SR number is in `SYNTHETIC_SR_PREFIX`'s range ("9999.<n>"): real SR numbers have at most three
  digits before the first dot, so no real act can collide;
* the catalog says `"synthetic": true` (top level and per act), and titles and abbreviations say so too.

This module is import-light (no lxml) because the publishing step imports `is_synthetic_eli` to refuse
synthetic acts.
"""

from __future__ import annotations

from urllib.parse import urlsplit

SYNTHETIC_HOST = "synthetic.chpit.invalid"
SYNTHETIC_ELI_ROOT = f"https://{SYNTHETIC_HOST}/eli/cc"
SYNTHETIC_SR_PREFIX = "9999."


def is_synthetic_eli(eli: str | None) -> bool:
    """True for any URI (act, consolidation, file link) on the synthetic host; False for None or real ELIs."""
    if not eli:
        return False
    try:
        host = urlsplit(eli.strip()).hostname
    except ValueError:
        return False
    return host == SYNTHETIC_HOST


def is_synthetic_sr(sr_number: str | None) -> bool:
    """True for an SR number in the generator's reserved range."""
    return sr_number is not None and sr_number.strip().startswith(SYNTHETIC_SR_PREFIX)
