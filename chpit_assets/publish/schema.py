"""The published item shape (card, "Fields"; CHPIT.md "Item fields"), in one place.

`ITEM_FIELDS` is the single source for both the gate's schema check (every item has exactly
these fields, in this order, with these types) and the parquet schema the shards are written
with, so the two can never disagree. Dates stay ISO strings, as in the card and the jsonl: a
reader gets the same value from the parquet and from bench-{lang}.jsonl.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import pyarrow as pa

# Field kinds: "str", "int", "bool", "date" (an ISO date string); a trailing "?" also allows null.
_ARROW = {
    "str": pa.string(),
    "int": pa.int64(),
    "bool": pa.bool_(),
    "date": pa.string(),
    "str?": pa.string(),
    "date?": pa.string(),
}

EDITION_FIELDS: dict[str, str] = {
    "version_id": "int",
    "date_applicability": "date",
    "date_end_applicability": "date?",
    "eli": "str",
    "source": "str",
    "text": "str",
}

ITEM_FIELDS: dict[str, str | dict[str, str]] = {  # PROTOCOL §1 order, recite stamp after `source` (§9)
    "id": "str",
    "lang": "str",
    "act_id": "int",
    "sr_number": "str",
    "abbreviation": "str",
    "article_number": "str",
    "e_id": "str",
    "as_of": "date",
    "kind": "str",
    "change_date": "date",
    "question": "str",
    "gold_is_current": "bool",
    "gold": EDITION_FIELDS,
    "distractor": EDITION_FIELDS,
    "source": "str",
    "recite_label": "str?",
    "recite_as_of": "date?",
    "licence": "str",
    "build": "str",
    "core": "bool",
}


def _arrow_type(kind: str | dict[str, str]) -> pa.DataType:
    if isinstance(kind, dict):
        # Nested editions are structs, so `load_dataset(...)[0]["gold"]["text"]` works as in the jsonl.
        return pa.struct([pa.field(k, _ARROW[v], nullable=v.endswith("?")) for k, v in kind.items()])
    return _ARROW[kind]


ARROW_SCHEMA: pa.Schema = pa.schema(
    [pa.field(k, _arrow_type(v), nullable=isinstance(v, str) and v.endswith("?")) for k, v in ITEM_FIELDS.items()]
)


def _value_error(value: object, kind: str) -> str | None:
    """Why `value` is not of `kind` (None when it is)."""
    if kind.endswith("?"):
        if value is None:
            return None
        kind = kind[:-1]
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)  # True is an int to Python, not to the card
    elif kind == "date":
        try:
            ok = isinstance(value, str) and date.fromisoformat(value).isoformat() == value
        except ValueError:
            ok = False
    else:
        ok = isinstance(value, str)
    return None if ok else f"{value!r} is not {kind}"


def _fields_errors(obj: object, spec: Mapping[str, str | dict], where: str) -> list[str]:
    if not isinstance(obj, Mapping):
        return [f"{where or 'item'} is not an object"]
    if list(obj) != list(spec):
        missing = [k for k in spec if k not in obj]
        extra = [k for k in obj if k not in spec]
        detail = f"missing {missing}, extra {extra}" if missing or extra else "fields out of the spec's order"
        return [f"{where or 'item'}: {detail}"]
    errors = []
    for key, kind in spec.items():
        path = f"{where}.{key}" if where else key
        if isinstance(kind, dict):
            errors += _fields_errors(obj[key], kind, path)
        elif (why := _value_error(obj[key], kind)) is not None:
            errors.append(f"{path}: {why}")
    return errors


def schema_errors(items: Sequence[Mapping]) -> list[str]:
    """'<id>: <what is wrong>' for every item whose fields or types differ from `ITEM_FIELDS` (empty = all fit)."""
    out = []
    for n, item in enumerate(items):
        errors = _fields_errors(item, ITEM_FIELDS, "")
        if errors:
            ident = item.get("id") if isinstance(item, Mapping) and isinstance(item.get("id"), str) else f"#{n}"
            out.append(f"{ident}: {'; '.join(errors)}")
    return out
