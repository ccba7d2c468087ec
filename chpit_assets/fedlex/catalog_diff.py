"""What changed in the Fedlex catalog since the last look: the state the new-edition sensor keeps between ticks.

A `Snapshot` remembers, per language and act, two things:

- a 12-hex digest of everything the per-language build reads about that act in
  that language (SR number, status and dates, titles, and every edition's
  consolidation, dates, file url and sha256), and
- the day of its latest edition (`yyyymmdd`).

That is enough to say *which* (act, language) changed (the digest) and to name
the editions that arrived (those after the remembered latest day) without
keeping every edition: Fedlex holds tens of thousands of consolidations per
language, and a sensor cursor is stored with every tick. A change to an older
edition (its end date set, a file added or rebuilt) is reported as a changed act
with no new edition named. A 48-bit digest missing a change is a one in 2^48
event per change, and the nightly rebuild reconciles everything anyway.

Act and edition keys are the ELI path after `/eli/` with `/` -> `-`
(`cc-2022-491`, `cc-2022-491-20250707`): free of `, | [ ]`, so usable as
Dagster partition keys should acts ever become a partition axis.

The cursor form is JSON, zlib-compressed, base64 (see `encode`). The pipeline records the snapshot
of the catalog each successful run built from (`record_built`), one file per Fedlex source; the
sensor compares the catalog with that, so what it remembers is what was built, not what it saw.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from chpit_assets.files import write_atomic

from .catalog import Catalog, CatalogAct, CatalogEdition

FORMAT = 1
_ELI_MARK = "/eli/"
_FORBIDDEN_IN_KEYS = frozenset(",|[] \t\n")

ChangeKind = Literal["new_act", "new_edition", "changed", "removed"]


class SnapshotError(ValueError):
    """A cursor that is not a snapshot this code wrote, or an ELI that cannot become a key."""


def eli_key(eli: str) -> str:
    """`https://fedlex.data.admin.ch/eli/cc/2022/491[/20250707]` -> `cc-2022-491[-20250707]`."""
    _, mark, path = eli.partition(_ELI_MARK)
    key = path.strip("/").replace("/", "-")
    if not mark or not key or _FORBIDDEN_IN_KEYS & set(key):
        raise SnapshotError(f"cannot derive a key from ELI {eli!r}: need '/eli/<path>' without , | [ ] or spaces")
    return key


@dataclass(frozen=True)
class ActState:
    digest: str  # 12 hex: the act's and its editions' catalog fields in one language
    latest: str  # yyyymmdd of its latest edition's date_applicability


@dataclass(frozen=True)
class ActChange:
    lang: str
    act: str  # eli_key of the act
    kind: ChangeKind
    new_editions: tuple[str, ...]  # eli_keys of editions after the remembered latest day (all, for a new act)


@dataclass(frozen=True)
class Snapshot:
    langs: Mapping[str, Mapping[str, ActState]]  # lang -> act key -> state

    @classmethod
    def of(cls, catalogs: Mapping[str, Catalog]) -> Snapshot:
        """The snapshot of one catalog per language (each already restricted to its language)."""
        return cls({lang: _act_states(catalog, lang) for lang, catalog in sorted(catalogs.items())})

    def lang_digest(self, lang: str) -> str:
        """One digest for a language's whole state: equal digests, nothing to do (also the sensor's run key)."""
        states = self.langs.get(lang, {})
        return _hash(f"{act}|{s.digest}|{s.latest}" for act, s in sorted(states.items()))

    def merged(self, newer: Snapshot) -> Snapshot:
        """This snapshot with `newer`'s languages replacing its own (the others kept)."""
        return Snapshot({**self.langs, **newer.langs})

    def pairs(self) -> int:
        """How many (act, language) pairs the snapshot remembers."""
        return sum(len(states) for states in self.langs.values())

    def encode(self) -> str:
        # Laid out per act, one "digest day" cell per language ("" = not in that language): an act's key is
        # then written once, not once per language, which is a third smaller at Fedlex's size.
        langs = sorted(self.langs)
        acts = sorted({act for states in self.langs.values() for act in states})
        cells = {
            act: [f"{s.digest} {s.latest}" if (s := self.langs[lang].get(act)) else "" for lang in langs]
            for act in acts
        }
        raw = {"v": FORMAT, "langs": langs, "acts": cells}
        packed = zlib.compress(json.dumps(raw, separators=(",", ":")).encode("utf-8"), 9)
        return base64.b64encode(packed).decode("ascii")

    @classmethod
    def decode(cls, cursor: str) -> Snapshot:
        try:
            raw = json.loads(zlib.decompress(base64.b64decode(cursor, validate=True)))
        except (binascii.Error, zlib.error, ValueError) as exc:
            raise SnapshotError(f"cursor is not a catalog snapshot ({type(exc).__name__}: {exc})") from exc
        if not isinstance(raw, dict) or raw.get("v") != FORMAT:
            version = raw.get("v") if isinstance(raw, dict) else None
            raise SnapshotError(f"cursor is not a format-{FORMAT} catalog snapshot (format {version!r})")
        try:
            langs: dict[str, dict[str, ActState]] = {lang: {} for lang in raw["langs"]}
            for act, row in raw["acts"].items():
                if len(row) != len(raw["langs"]):
                    raise ValueError(f"act {act} has {len(row)} cells for {len(raw['langs'])} languages")
                for lang, cell in zip(raw["langs"], row):
                    if cell:
                        digest, latest = cell.split(" ")
                        langs[lang][act] = ActState(digest, latest)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"cursor snapshot is malformed ({type(exc).__name__}: {exc})") from exc
        return cls(langs)


def read_built(path: Path) -> Snapshot:
    """The snapshot `record_built` left at `path`; empty when nothing was built from this source yet."""
    try:
        return Snapshot.decode(path.read_text(encoding="ascii"))
    except FileNotFoundError:
        return Snapshot({})
    except (SnapshotError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: {exc}") from exc


def record_built(path: Path, snapshot: Snapshot) -> None:
    """Remember `snapshot`'s languages as built (atomically; other languages keep their record)."""
    write_atomic(path, read_built(path).merged(snapshot).encode().encode("ascii"))


def promote_staged(built: Path, staged: Iterable[Path]) -> list[str]:
    """Record as built the staged snapshots that exist (each language's last build); returns their languages."""
    found = [read_built(path) for path in staged if path.exists()]
    snapshot = Snapshot({lang: states for s in found for lang, states in s.langs.items()})
    if snapshot.langs:
        record_built(built, snapshot)
    return sorted(snapshot.langs)


def diff(previous: Snapshot, catalogs: Mapping[str, Catalog]) -> tuple[Snapshot, list[ActChange]]:
    """The new snapshot of `catalogs` and every (act, language) that differs from `previous`.

    Only languages present in `catalogs` are compared: a language not polled this time is not "removed".
    """
    current = Snapshot.of(catalogs)
    changes: list[ActChange] = []
    for lang, catalog in sorted(catalogs.items()):
        before = previous.langs.get(lang, {})
        now = current.langs[lang]
        if before and not now:
            # An endpoint answering with nothing looks like every act repealed at once; a run would wipe
            # the language from the store. Refuse, and let the next look decide.
            raise SnapshotError(f"[{lang}]: the catalog has no editions, {len(before)} acts before; not a removal")
        days = _edition_days(catalog)
        for act in sorted(now.keys() | before.keys()):
            old, new = before.get(act), now.get(act)
            if new is None:
                changes.append(ActChange(lang, act, "removed", ()))
            elif old is None:
                changes.append(ActChange(lang, act, "new_act", tuple(key for _, key in days[act])))
            elif old != new:
                arrived = tuple(key for day, key in days[act] if day > old.latest)
                changes.append(ActChange(lang, act, "new_edition" if arrived else "changed", arrived))
    return current, changes


def _act_states(catalog: Catalog, lang: str) -> dict[str, ActState]:
    editions: dict[str, list[CatalogEdition]] = {}
    for e in catalog.editions:
        if e.lang != lang:
            raise SnapshotError(f"{e.consolidation} is [{e.lang}] in the catalog given for [{lang}]")
        editions.setdefault(e.act_eli, []).append(e)
    acts = {a.eli: a for a in catalog.acts}
    states: dict[str, ActState] = {}
    for eli, own in editions.items():
        act = acts.get(eli)
        if act is None:
            # The build would refuse this catalog too (ingest looks every edition's act up).
            raise SnapshotError(f"[{lang}] editions of {eli} but no such act in the catalog")
        lines = [_act_line(act)]
        lines += [
            f"{e.consolidation}|{e.date_applicability}|{e.date_end_applicability}|{e.file_url}|{e.sha256}" for e in own
        ]
        latest = max(e.date_applicability for e in own)
        states[eli_key(eli)] = ActState(_hash(sorted(lines)), latest.strftime("%Y%m%d"))
    return states


def _act_line(act: CatalogAct) -> str:
    # Titles in every language: the per-language build writes all of them into ch_act.
    titles = ";".join(f"{lang}={t.title}/{t.title_short}" for lang, t in sorted(act.titles.items()))
    return (
        f"{act.eli}|{act.sr_number}|{act.in_force_status}|{act.date_entry_in_force}|"
        f"{act.date_no_longer_in_force}|{titles}"
    )


def _edition_days(catalog: Catalog) -> dict[str, list[tuple[str, str]]]:
    """act key -> [(yyyymmdd, edition key)] sorted by day."""
    out: dict[str, list[tuple[str, str]]] = {}
    for e in catalog.editions:
        out.setdefault(eli_key(e.act_eli), []).append(
            (e.date_applicability.strftime("%Y%m%d"), eli_key(e.consolidation))
        )
    return {act: sorted(days) for act, days in out.items()}


def _hash(lines) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8") + b"\n")
    return h.hexdigest()[:12]
