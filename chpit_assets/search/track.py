"""The search track: CH-PiT items whose question quotes the article instead of numbering it.

An extra config beside `core`/`full`, never mixed into them. For each benchmark item, the question
gives the act (abbreviation and SR number), the date and a distinctive phrase of the article's
wording, and asks which article contained it; gold and distractor are the item's own, so the same
scorer scores it. A system must search the right edition, then quote it.

How the phrase is chosen (each rule prevents the failure named):
 T1 From the wording both editions share: a window of consecutive words of the gold text whose
    normalised form (S1) occurs in both editions' normalised texts. The phrase must not give away
    which edition is asked for; both have it, so only the date decides.
 T2 PHRASE_WORDS words, at least MIN_PHRASE_CHARS characters, no paragraph number in it: a short
    phrase ("der Verantwortliche") is in half the act and names nothing.
 T3 Unique: the phrase occurs in no other article of either edition (normalised comparison), so
    exactly one article answers the question.
 T4 The first window in text order that passes; with none at PHRASE_WORDS words, the same at
    LONG_PHRASE_WORDS (a longer phrase is more often unique). Deterministic.
An item without such a phrase is skipped and counted (`no_shared_phrase`: T1/T2 found no window;
`phrase_not_unique`: every window failed T3).

Ids: first 16 hex of sha1(f"search|{id}") of the item the question is made from, so a search item
never collides with a core/full id and stays stable with it (B17).

Incremental (issue 27.1): the phrase of an item depends only on what `phrase_key` hashes (its
article's two texts, the fingerprints of the two editions the other articles come from, and the
code of T1-T4 and S1). A build reuses the phrases the last one found for equal keys
(`track-{lang}.phrases.json` beside the search index) and searches only the others, reading their
editions in one batch and normalising each article once; the question and the line are rendered
again from the item, so the file is the bytes a build from scratch writes. A phrases file that is
damaged, edited, of another language or of other rules is not used (`TrackCacheError`, the build's
`distrusted` reason) and every phrase is searched again.

The items searched again after a new edition are mostly new items of unchanged editions, and T3
normalised every article of both their editions (24,000 articles a language at CH-PiT scale).
`TextCache` (`track-{lang}.texts.sqlite` beside the phrases) keeps each edition's normalised
articles under its content fingerprint, so an edition is normalised once, not once per build that
searches one of its items. An entry is used only when its sha256, taken over the rules, the
fingerprint and the texts, is still right: a damaged or moved entry is normalised again and
rewritten, and a file that is not such a cache, or of other rules or another language, is replaced
(the build's `texts_distrusted`). Its writes are one SQLite transaction: killed inside it, the next
build's connection rolls the journal back before reading.

After one new edition most items' lines are unchanged, and decoding and rendering all 5,000 again
was a third of a rebuild's track (issue 27.2). The lines memo (`track-{lang}.lines.json`) records,
per bench line (sha256 of its bytes with the core flag false: a search item is never core), the two
editions and phrase key it was searched under and where its line is in the search file written
with it. A line is carried, as written, while its bytes, its editions' fingerprints and its phrase
are unchanged; the line is a function of exactly those and of the code in the memo's stamp. The memo
names the sha256 of that search file: a file edited or replaced since (or a memo older than the
file, after a build killed between the two writes) is never indexed into; the memo is set aside
(`lines_distrusted`) and every line rendered again.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from itertools import chain
from pathlib import Path
from typing import Protocol

import duckdb

import chpit_assets.bench.files as files_module
import chpit_assets.bench.questions as questions_module
import chpit_scorer.text as text_module
from chpit_assets.bench.files import item_line, lines_bytes
from chpit_assets.bench.items import LINE_KEY_CODE, line_key
from chpit_assets.bench.questions import format_date
from chpit_assets.files import SealedFileError, open_sealed, sealed_bytes, write_atomic
from chpit_scorer import normalise

PHRASE_WORDS = 8
LONG_PHRASE_WORDS = 14
MIN_PHRASE_CHARS = 40
SKIPS = ("no_shared_phrase", "phrase_not_unique")

TEMPLATES = {
    "de": "Welcher Artikel des {abbr} (SR {sr}) enthielt am {date} die Wendung «{phrase}»? Zitiere ihn.",
    "fr": "Quel article de l'acte {abbr} (RS {sr}) contenait le {date} l'expression « {phrase} » ? Citez-le.",
    "it": "Quale articolo dell'atto {abbr} (RS {sr}) conteneva il {date} l'espressione «{phrase}»? Citalo.",
}

_MARKER = re.compile(r"^\d+[a-z]*\s+")  # a paragraph number at the start of a line (S2)


class TrackError(ValueError):
    """No search-track template for a language."""


def windows(text: str, size: int) -> Iterable[str]:
    """Every run of `size` consecutive words of each line of `text`, paragraph numbers left out (T2)."""
    for line in text.splitlines():
        words = _MARKER.sub("", line.strip()).split()
        for start in range(len(words) - size + 1):
            yield " ".join(words[start : start + size])


def distinctive_phrase(gold: str, distractor: str, others: Iterable[str]) -> tuple[str | None, str | None]:
    """(phrase, None) or (None, skip reason) for one article: T1-T4."""
    return _phrase(gold, normalise(gold), normalise(distractor), _joined(normalise(t) for t in others))


def _joined(normalised: Iterable[str]) -> str:
    # A normalised phrase has no newline (S1 collapses whitespace to single spaces) and is never
    # empty (MIN_PHRASE_CHARS), so it is in this one string exactly when it is in one of the texts:
    # one substring search per window instead of one per other article (T3 unchanged, issue 27.1).
    return "\n".join(normalised)


def _phrase(gold: str, gold_n: str, distractor_n: str, other_n: str) -> tuple[str | None, str | None]:
    shared_any = False
    for size in (PHRASE_WORDS, LONG_PHRASE_WORDS):
        for window in windows(gold, size):
            phrase = window.rstrip(",;:")  # a quotation ends on a word, not on the clause's comma
            n = normalise(phrase)
            if len(n) < MIN_PHRASE_CHARS or n not in gold_n or n not in distractor_n:
                continue
            shared_any = True
            if n not in other_n:
                return phrase, None
    return None, "phrase_not_unique" if shared_any else "no_shared_phrase"


def search_question(lang: str, abbreviation: str, sr_number: str, as_of: date, phrase: str) -> str:
    if lang not in TEMPLATES:
        raise TrackError(f"no search-track template for language {lang!r}")
    return TEMPLATES[lang].format(abbr=abbreviation, sr=sr_number, date=format_date(as_of, lang), phrase=phrase)


def search_item_id(item_id: str) -> str:
    return hashlib.sha1(f"search|{item_id}".encode()).hexdigest()[:16]


def track_path(build_dir: Path | str, lang: str) -> Path:
    """The search track's file beside the build's bench-{lang}.jsonl."""
    return Path(build_dir) / f"search-{lang}.jsonl"


Phrase = tuple[str | None, str | None]  # distinctive_phrase's answer: (phrase, None) or (None, skip)
SIDES = ("gold", "distractor")


class Editions(Protocol):
    """What `build_track` reads of the editions its items are made from: one call each, batched."""

    def fingerprints(self, version_ids: list[int]) -> dict[int, str]:
        """Per edition, a string that changes whenever its articles (e_id, text) may have; an edition
        left out is not vouched for, and its items are searched on every build."""
        ...

    def articles(self, version_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
        """Per edition, its articles as (e_id, text)."""
        ...


@dataclass
class TrackBuild:
    items: list[dict]  # the search items built now, sorted by id (update_track: not the lines it carried)
    skipped: Counter = field(default_factory=Counter)
    phrases: dict[str, Phrase] = field(default_factory=dict)  # every item's, by phrase_key: the next reuse
    searched: int = 0  # items whose phrase was searched now; the others were reused
    distrusted: str | None = None  # why the reuse file was not used (rebuilt from scratch)
    normalised: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # by fingerprint, not cached yet
    versions: dict[int, str] = field(default_factory=dict)  # every item's editions' fingerprints: what the cache keeps
    keys: dict[str, str] = field(default_factory=dict)  # item id -> phrase_key, for the items that have one
    texts_distrusted: str | None = None  # why (some of) the text cache was not used
    reused_lines: int = 0  # bench lines whose search line was carried from the last build (update_track)
    written: int = 0  # search lines written (update_track): the carried and the built
    lines_distrusted: str | None = None  # why the last build's lines were not carried


def phrase_key(item: dict, fingerprints: dict[int, str]) -> str | None:
    """Everything T1-T4 read for one item: its article's two texts, the editions the other articles
    come from, and the rules themselves (`RULES`). Equal keys give equal phrases; None when an
    edition is not vouched for."""
    h = hashlib.sha256()
    parts = [RULES, item["e_id"]]
    for side in SIDES:
        version_id = item[side]["version_id"]
        if version_id not in fingerprints:
            return None
        parts += [item[side]["text"], str(version_id), fingerprints[version_id]]
    for part in parts:  # each part length-prefixed: no two lists of parts hash alike
        data = part.encode()
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def build_track(
    items: Iterable[dict],
    editions: Editions,
    reuse: Mapping[str, Phrase] | None = None,
    cached: Callable[[list[str]], dict[str, list[tuple[str, str]]]] | None = None,
) -> TrackBuild:
    """Search-track items from benchmark items, sorted by id. An item whose `phrase_key` is in
    `reuse` takes that phrase; the others are searched (T3 over every other article of both
    editions), reading only their editions, each in one batch and normalised once. `cached` gives
    the normalised articles it holds of the fingerprints asked (`TextCache.get`); the editions it
    does not hold are read and normalised, and left in `normalised` for the cache."""
    items = list(items)
    reuse = reuse or {}
    fingerprints = editions.fingerprints(sorted({i[side]["version_id"] for i in items for side in SIDES}))
    keys = [phrase_key(i, fingerprints) for i in items]
    needed = {i[side]["version_id"] for i, key in zip(items, keys) if key not in reuse for side in SIDES}
    held = cached(sorted({fingerprints[v] for v in needed if v in fingerprints})) if cached else {}
    normalised = {v: held[fingerprints[v]] for v in needed if fingerprints.get(v) in held}
    texts = editions.articles(sorted(needed - normalised.keys()))
    out = TrackBuild([], versions=fingerprints, keys={i["id"]: k for i, k in zip(items, keys) if k is not None})

    def others(version_id: int, e_id: str) -> Iterator[str]:
        if version_id not in normalised:
            normalised[version_id] = [(e, normalise(t)) for e, t in texts.pop(version_id, [])]
            if version_id in fingerprints:
                out.normalised[fingerprints[version_id]] = normalised[version_id]
        return (n for e, n in normalised[version_id] if e != e_id)

    for item, key in zip(items, keys):
        if key is not None and key in reuse:
            phrase, skip = reuse[key]
        else:
            gold, distractor, e_id = item["gold"], item["distractor"], item["e_id"]
            other_n = _joined(chain(others(gold["version_id"], e_id), others(distractor["version_id"], e_id)))
            phrase, skip = _phrase(gold["text"], normalise(gold["text"]), normalise(distractor["text"]), other_n)
            out.searched += 1
        if key is not None:
            out.phrases[key] = (phrase, skip)
        if phrase is None:
            out.skipped[skip] += 1
            continue
        question = search_question(
            item["lang"], item["abbreviation"], item["sr_number"], date.fromisoformat(item["as_of"]), phrase
        )
        out.items.append(
            {**item, "id": search_item_id(item["id"]), "question": question, "phrase": phrase, "core": False}
        )
    out.items.sort(key=lambda i: i["id"])
    return out


class StoreEditions:
    """`Editions` over a store connection (ch_act_version, ch_act_article)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def fingerprints(self, version_ids: list[int]) -> dict[int, str]:
        # content_sha256 is ingest's digest of the stored articles (e_id, occurrence, number,
        # heading, text): it vouches for them without reading them, and a re-issued file with the
        # same content leaves it alone. An edition without one (an older store) is not vouched for.
        rows = self.con.execute(
            "SELECT version_id, content_sha256 FROM ch_act_version "
            "WHERE version_id IN (SELECT unnest($ids)) AND content_sha256 IS NOT NULL",
            {"ids": version_ids},
        ).fetchall()
        return dict(rows)

    def articles(self, version_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
        out: dict[int, list[tuple[str, str]]] = {}
        if not version_ids:
            return out
        cursor = self.con.execute(
            "SELECT version_id, e_id, text FROM ch_act_article WHERE version_id IN (SELECT unnest($ids)) "
            "ORDER BY version_id, e_id, occurrence",
            {"ids": version_ids},
        )
        while batch := cursor.fetchmany(4096):
            for version_id, e_id, text in batch:
                out.setdefault(version_id, []).append((e_id, text))
        return out


class TrackCacheError(SealedFileError):
    """The phrases file a build would reuse is damaged or not this build's: names the file and why."""


def phrases_path(search_dir: Path | str, lang: str) -> Path:
    """The phrases one build of the track found, which the next reuses (beside the search index)."""
    return Path(search_dir) / f"track-{lang}.phrases.json"


def phrases_bytes(phrases: Mapping[str, Phrase], lang: str) -> bytes:
    return sealed_bytes({"rules": RULES, "lang": lang}, {k: list(v) for k, v in phrases.items()})


def load_phrases(path: Path, lang: str) -> dict[str, Phrase]:
    """The phrases `path` holds ({} when there is none yet); TrackCacheError unless it is whole, for
    `lang`, made by these rules, and every entry is a phrase or a known skip."""
    sealed = open_sealed(path, "a phrases file", {"rules": RULES, "lang": lang}, TrackCacheError)
    if sealed is None:
        return {}
    phrases = sealed[1]
    out: dict[str, Phrase] = {}
    for key, value in phrases.items():
        ok = isinstance(value, list) and len(value) == 2
        ok = ok and (
            (isinstance(value[0], str) and value[0] and value[1] is None) or (value[0] is None and value[1] in SKIPS)
        )
        if not ok:
            raise TrackCacheError(f"{path}: entry {key} is neither a phrase nor a known skip: {value!r}")
        out[key] = (value[0], value[1])
    return out


def texts_path(search_dir: Path | str, lang: str) -> Path:
    """The normalised articles of the editions the track's items come from (beside the phrases)."""
    return Path(search_dir) / f"track-{lang}.texts.sqlite"


_TEXTS_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE edition (fingerprint TEXT PRIMARY KEY, sha256 TEXT NOT NULL, body BLOB NOT NULL);
"""


class TextCache:
    """Per edition content fingerprint, its articles as (e_id, normalised text), in a SQLite file."""

    def __init__(self, path: Path, lang: str) -> None:
        self.path, self.lang = path, lang
        self.distrusted: str | None = None
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.path.exists():
            # A connection that may write: it rolls back the journal of a build killed mid-write.
            db = sqlite3.connect(self.path, isolation_level=None)
            try:
                meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            except sqlite3.DatabaseError as e:
                self.distrusted = f"{self.path} is not a text cache ({e})"
            else:
                if meta == {"rules": RULES, "lang": self.lang}:
                    return _unsynced(db)
                self.distrusted = (
                    f"{self.path} holds {meta.get('lang')!r} by rules {meta.get('rules')!r}, "
                    f"not {self.lang!r} by {RULES!r}"
                )
            db.close()
        return self._create()

    def _create(self) -> sqlite3.Connection:
        # Replaced whole, with any journal beside it: rolled back into the new file it would corrupt it.
        self.path.unlink(missing_ok=True)
        self.path.with_name(f"{self.path.name}-journal").unlink(missing_ok=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None)
        db.executescript(_TEXTS_DDL)
        db.execute("INSERT INTO meta VALUES ('rules', ?), ('lang', ?)", [RULES, self.lang])
        return _unsynced(db)

    def _replace(self, reason: str) -> None:
        """A file SQLite finds damaged past its header: started again, empty."""
        self.distrusted = reason
        self.db.close()
        self.db = self._create()

    def get(self, fingerprints: list[str]) -> dict[str, list[tuple[str, str]]]:
        """The entries held of `fingerprints` that are whole; the others are left out (and counted)."""
        try:
            rows = self.db.execute(
                "SELECT fingerprint, sha256, body FROM edition WHERE fingerprint IN (SELECT value FROM json_each(?))",
                [json.dumps(fingerprints)],
            ).fetchall()
        except sqlite3.DatabaseError as e:
            self._replace(f"{self.path} cannot be read ({e})")
            return {}
        out: dict[str, list[tuple[str, str]]] = {}
        for fingerprint, digest, body in rows:
            entry = _unseal(fingerprint, digest, body)
            if entry is not None:
                out[fingerprint] = entry
        if len(out) < len(rows):
            self.distrusted = (
                f"{self.path}: {len(rows) - len(out)} entries do not match their sha256 (normalised again)"
            )
        return out

    def put(self, entries: Mapping[str, list[tuple[str, str]]], keep: set[str]) -> None:
        """Add `entries` (over a refused one of the same key) and drop those not in `keep`, at once."""
        try:
            self._put(entries, keep)
        except sqlite3.DatabaseError as e:
            self._replace(f"{self.path} cannot be written ({e})")
            self._put(entries, keep)

    def _put(self, entries: Mapping[str, list[tuple[str, str]]], keep: set[str]) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            sealed = ((fingerprint, _seal(fingerprint, articles)) for fingerprint, articles in entries.items())
            self.db.executemany(
                "INSERT OR REPLACE INTO edition VALUES (?, ?, ?)",
                [(fingerprint, *entry) for fingerprint, entry in sealed if entry is not None],
            )
            self.db.execute(
                "DELETE FROM edition WHERE fingerprint NOT IN (SELECT value FROM json_each(?))",
                [json.dumps(sorted(keep))],
            )
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.db.close()


def _unsynced(db: sqlite3.Connection) -> sqlite3.Connection:
    # A power cut may then tear the file: a torn entry fails its sha256, a torn file is replaced.
    db.execute("PRAGMA synchronous = OFF")
    return db


def _entry_digest(fingerprint: str, body: bytes) -> str:
    # The rules and the key are hashed with the texts: an entry moved under another key is refused.
    return hashlib.sha256(f"{RULES}|{fingerprint}|".encode() + body).hexdigest()


def _seal(fingerprint: str, articles: list[tuple[str, str]]) -> tuple[str, bytes] | None:
    """An entry's digest and body: the e_ids joined by NUL, SOH, the texts joined by NUL (a third of
    the time JSON takes on the 80 MB a full build writes). None for an edition whose e_ids or texts
    hold a separator: it is not cached."""
    e_ids, texts = [e for e, _ in articles], [n for _, n in articles]
    if any("\x00" in e or "\x01" in e for e in e_ids) or any("\x00" in n for n in texts):
        return None
    body = ("\x00".join(e_ids) + "\x01" + "\x00".join(texts)).encode() if articles else b""
    return _entry_digest(fingerprint, body), body


def _unseal(fingerprint: str, digest: str, body: object) -> list[tuple[str, str]] | None:
    if not isinstance(body, bytes) or digest != _entry_digest(fingerprint, body):
        return None
    if not body:
        return []
    try:
        e_ids, _, texts = body.decode().partition("\x01")
    except UnicodeDecodeError:
        return None
    ids, normalised = e_ids.split("\x00"), texts.split("\x00")
    # As many texts as e_ids, or the body is not one `_seal` wrote.
    return list(zip(ids, normalised, strict=True)) if len(ids) == len(normalised) else None


def lines_path(search_dir: Path | str, lang: str) -> Path:
    """What each bench line became in the last build of the track (beside the phrases)."""
    return Path(search_dir) / f"track-{lang}.lines.json"


@dataclass(frozen=True)
class Carried:
    """What one bench line became in the last build: searched in these two editions (version id,
    fingerprint) under phrase key `key`; its search line is line `index` of the search file the
    memo describes, under `search_id` (both None: skipped)."""

    gold: tuple[int, str]
    distractor: tuple[int, str]
    key: str
    search_id: str | None
    index: int | None


def load_carried(path: Path, lang: str, track_file: Path) -> tuple[dict[str, Carried], list[bytes]]:
    """The lines memo at `path` ({} when there is none) by bench line sha256, and the lines of the
    search file it describes; TrackCacheError unless the memo is whole, for `lang`, made by this code,
    and `track_file` is still byte for byte the file it describes."""
    sealed = open_sealed(path, "a track lines file", {"rules": RULES, "render": RENDER, "lang": lang}, TrackCacheError)
    if sealed is None:
        return {}, []
    head, entries = sealed
    try:
        data = track_file.read_bytes()
    except FileNotFoundError:
        raise TrackCacheError(f"{path}: the search file it describes, {track_file}, is gone") from None
    if hashlib.sha256(data).hexdigest() != head.get("track_sha256"):
        raise TrackCacheError(f"{path}: {track_file} is not the file it describes (changed since)")
    lines = data.split(b"\n")[:-1]
    out: dict[str, Carried] = {}
    for digest, value in entries.items():
        try:
            gold_vid, gold_fp, vid, fp, key, search_id, index = value
        except (TypeError, ValueError):
            raise TrackCacheError(f"{path}: entry {digest} is malformed: {value!r}") from None
        whole = all(type(v) is int for v in (gold_vid, vid)) and all(isinstance(t, str) for t in (gold_fp, fp, key))
        shown = isinstance(search_id, str) and type(index) is int and 0 <= index < len(lines)
        if not whole or not (shown or search_id is index is None):
            raise TrackCacheError(f"{path}: entry {digest} is malformed: {value!r}")
        out[digest] = Carried((gold_vid, gold_fp), (vid, fp), key, search_id, index)
    return out, lines


def update_track(
    con: duckdb.DuckDBPyConnection, lines: list[bytes], lang: str, build_dir: Path | str, search_dir: Path | str
) -> tuple[TrackBuild, bytes]:
    """Build search-{lang}.jsonl from the language's bench item `lines` (as written), reusing the last
    build's phrases and normalised editions; write it, the phrases and the lines memo for the next
    build (all atomic) and add the editions normalised now to the text cache. A file that cannot be
    trusted is set aside, with the reason in `distrusted` (phrases) or `lines_distrusted`. The bytes
    written are those of a build from scratch (tests/search/test_track_reuse.py).

    A bench line the last build also had, byte for byte with its core flag aside (search items are
    never core), whose two editions kept their fingerprints and whose phrase is still in the phrases
    file, is carried: its search line is the last file's, neither decoded nor rendered again. That
    line is a function of those inputs and of this module, S1 and the rendering code (`RULES`,
    `RENDER`, both in the memo's stamp); after one new edition about four lines in five are carried."""
    path = phrases_path(search_dir, lang)
    out_file = track_path(build_dir, lang)
    distrusted = lines_distrusted = None
    try:
        reuse = load_phrases(path, lang)
    except TrackCacheError as e:
        reuse, distrusted = {}, str(e)
    try:
        carried, previous = load_carried(lines_path(search_dir, lang), lang, out_file)
    except TrackCacheError as e:
        carried, previous, lines_distrusted = {}, [], str(e)
    digests = [line_key(line) for line in lines]
    editions = StoreEditions(con)
    known = {d: carried[d] for d in digests if d in carried and carried[d].key in reuse}
    now = editions.fingerprints(sorted({v for c in known.values() for v, _ in (c.gold, c.distractor)}))
    kept = {
        d: c
        for d, c in known.items()
        if now.get(c.gold[0]) == c.gold[1] and now.get(c.distractor[0]) == c.distractor[1]
    }
    fresh = [(d, json.loads(line)) for d, line in zip(digests, lines, strict=True) if d not in kept]
    cache = TextCache(texts_path(search_dir, lang), lang)
    try:
        track = build_track([item for _, item in fresh], editions, reuse, cache.get)
        track.versions.update(side for c in kept.values() for side in (c.gold, c.distractor))
        cache.put(track.normalised, set(track.versions.values()))
    finally:
        cache.close()
    track.distrusted, track.texts_distrusted, track.lines_distrusted = distrusted, cache.distrusted, lines_distrusted
    for c in kept.values():
        track.phrases[c.key] = reuse[c.key]
        if c.index is None:
            track.skipped[reuse[c.key][1]] += 1
    track.reused_lines = len(kept)
    by_id = {c.search_id: previous[c.index] for c in kept.values() if c.search_id is not None and c.index is not None}
    by_id.update((i["id"], item_line(i).encode()) for i in track.items)
    order = sorted(by_id)
    track.written = len(order)
    data = lines_bytes([by_id[search_id] for search_id in order])
    write_atomic(out_file, data)
    # Not fsynced: losing either costs one search from scratch, never a wrong phrase (keys are content)
    # or a wrong line (the memo names the sha256 of the file its indexes point into).
    write_atomic(path, phrases_bytes(track.phrases, lang), durable=False)
    memo = dict(kept)
    for digest, item in fresh:
        key = track.keys.get(item["id"])
        if key is not None:  # None: an edition not vouched for, searched on every build
            search_id = None if track.phrases[key][0] is None else search_item_id(item["id"])
            gold, distractor = (
                (v, track.versions[v]) for v in (item["gold"]["version_id"], item["distractor"]["version_id"])
            )
            memo[digest] = Carried(gold, distractor, key, search_id, None)
    write_atomic(lines_path(search_dir, lang), _carried_bytes(memo, order, data, lang), durable=False)
    return track, data


def _carried_bytes(carried: Mapping[str, Carried], order: list[str], data: bytes, lang: str) -> bytes:
    """The lines memo of a search file (`data`, its lines the search ids `order`)."""
    position = {search_id: n for n, search_id in enumerate(order)}
    entries = {
        digest: [*c.gold, *c.distractor, c.key, c.search_id, None if c.search_id is None else position[c.search_id]]
        for digest, c in carried.items()
    }
    head = {"rules": RULES, "render": RENDER, "lang": lang, "track_sha256": hashlib.sha256(data).hexdigest()}
    return sealed_bytes(head, entries)


# The code T1-T4 run (this module and S1's normalise): a reused phrase is one these would find again;
# any edit to either makes the next build search every phrase once.
RULES = hashlib.sha256(Path(__file__).read_bytes() + Path(text_module.__file__).read_bytes()).hexdigest()[:16]
# The code a search line is rendered by beside this module (its JSON and its question's date), and
# the key the lines memo finds a bench line under: a carried line is one these would render again.
RENDER = hashlib.sha256(
    Path(files_module.__file__).read_bytes() + Path(questions_module.__file__).read_bytes() + LINE_KEY_CODE
).hexdigest()[:16]
