"""Sealed cache files (chpit_assets/files.py): what is written is read back equal, and a file that was
cut short, bit-flipped, made for other inputs or by other code is refused with the file named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.files import SealedFileError, open_sealed, sealed_bytes

names = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
values = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8))
heads = st.dictionaries(names.filter(lambda k: k != "sha256"), st.one_of(st.integers(0, 99), st.text(max_size=8)))
entries = st.dictionaries(st.text(max_size=10), st.lists(values, max_size=4), max_size=6)


class NotOurs(SealedFileError):
    pass


@settings(max_examples=60, deadline=None)
@given(head=heads, body=entries)
def test_what_is_sealed_opens_equal_and_the_same_entries_give_the_same_bytes(tmp_path_factory, head, body):
    path = tmp_path_factory.mktemp("sealed") / "memo.json"
    path.write_bytes(sealed_bytes(head, body))
    opened = open_sealed(path, "a memo", head)
    assert opened is not None
    assert {k: v for k, v in opened[0].items() if k != "sha256"} == head and opened[1] == body
    assert sealed_bytes(dict(reversed(head.items())), dict(reversed(body.items()))) == path.read_bytes()


@settings(max_examples=150, deadline=None)
@given(head=heads, body=entries, data=st.data())
def test_any_changed_byte_is_refused(tmp_path_factory, head, body, data):
    """With every head field in the stamp, no single changed byte goes unnoticed: in the entries line
    the sha256 catches it, in the head the stamp or the sha256 does, elsewhere the two-line shape."""
    raw = bytearray(sealed_bytes(head, body))
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] ^= data.draw(st.integers(1, 255))
    path = tmp_path_factory.mktemp("sealed") / "memo.json"
    path.write_bytes(bytes(raw))
    with pytest.raises(NotOurs, match=str(path)):
        open_sealed(path, "a memo", head, NotOurs)


def test_no_file_is_none_and_an_unreadable_one_is_refused(tmp_path):
    assert open_sealed(tmp_path / "absent.json", "a memo", {}) is None
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(SealedFileError, match="dir.json: unreadable"):
        open_sealed(tmp_path / "dir.json", "a memo", {})


@pytest.mark.parametrize(
    ("stamp", "reason"),
    [
        ({"lang": "fr"}, "written with lang 'de'; this build's is 'fr'"),
        ({"rules": "new"}, "written with rules 'old'; this build's is 'new'"),
        ({"render": "r1"}, "written with render None; this build's is 'r1'"),
    ],
)
def test_a_file_of_other_inputs_or_code_is_refused_with_both_values(tmp_path, stamp, reason):
    path = tmp_path / "memo.json"
    path.write_bytes(sealed_bytes({"lang": "de", "rules": "old"}, {"k": [1]}))
    with pytest.raises(SealedFileError, match=reason):
        open_sealed(path, "a memo", stamp)


@pytest.mark.parametrize(
    "raw",
    [b"", b"{}\n{}", b"{}\n{}\n\n", b"[]\n{}\n", b'{"sha256":"x"}\n[]\n', b"\xff\xfe\n{}\n", b"{}\nnot json\n"],
)
def test_what_is_not_a_sealed_file_is_refused(tmp_path, raw):
    path = tmp_path / "memo.json"
    path.write_bytes(raw)
    with pytest.raises(SealedFileError, match="memo.json"):
        open_sealed(path, "a memo", {})
