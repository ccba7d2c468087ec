"""Atomic file writes: a reader sees the old file or all of the new one, never half of one; and the
sealed files the build's caches keep between builds (`sealed_bytes`, `open_sealed`)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new, exclusively created temp file next to `path`. Mode 0666 minus the umask (0644 under
    the usual 022), like any file the process writes: mkstemp's fixed 0600 would leave published
    files unreadable to the group and others (the web server, a second operator account)."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue


def write_atomic(path: Path | str, data: bytes, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder and rename.

    `durable` also fsyncs the content before the rename (about 10 ms a file here): worth it for
    outputs and cached editions, not for a cache index entry whose loss only costs a re-fetch.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class SealedFileError(ValueError):
    """A sealed file that cannot be trusted; the message names the file and why."""


def canonical_json(value: object) -> str:
    """Sorted keys, no spaces, UTF-8 as is: equal values give equal bytes."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def sealed_bytes(head: Mapping[str, object], entries: Mapping[str, object]) -> bytes:
    """A cache file a later build may reuse: a head line (`head`, which says what made the entries,
    and the sha256 of the entries line), then the entries line, both canonical JSON.

    The digest makes a file that was cut short, bit-flipped or edited by hand detectable, so that a
    cache cannot hand a build an entry its code never computed; the head lets the reader refuse
    entries made by other code or for other inputs (`open_sealed`)."""
    body = canonical_json(entries)
    stamp = {**head, "sha256": hashlib.sha256(body.encode()).hexdigest()}
    return (canonical_json(stamp) + "\n" + body + "\n").encode()


def open_sealed(
    path: Path, what: str, stamp: Mapping[str, object], error: type[SealedFileError] = SealedFileError
) -> tuple[dict, dict] | None:
    """(head, entries) of the `sealed_bytes` file at `path`, None when there is none; `error` (naming
    `path`) unless it is whole and its head holds `stamp`, the values the current code would write."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise error(f"{path}: unreadable: {e}") from e
    try:
        head_line, body, rest = raw.decode().split("\n")
        head, entries = json.loads(head_line), json.loads(body)
    except (UnicodeDecodeError, ValueError) as e:
        raise error(f"{path} is not {what} ({e})") from e
    if rest or not isinstance(head, dict) or not isinstance(entries, dict):
        raise error(f"{path} is not {what}")
    if head.get("sha256") != hashlib.sha256(body.encode()).hexdigest():
        raise error(f"{path}: its entries do not match their recorded sha256 (changed on disk)")
    for key, want in stamp.items():
        if head.get(key) != want:
            raise error(f"{path} was written with {key} {head.get(key)!r}; this build's is {want!r}")
    return head, entries
