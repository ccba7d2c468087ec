"""catalog_diff: keys, change kinds, the cursor form and its size, refusals. Plain data, no Dagster."""

from __future__ import annotations

import base64
import zlib
from dataclasses import replace
from datetime import date

import pytest

from chpit_assets.fedlex.catalog import ActTitle, Catalog, CatalogAct, CatalogEdition
from chpit_assets.fedlex.catalog_diff import (
    ActChange,
    Snapshot,
    SnapshotError,
    diff,
    eli_key,
)

from .conftest import DSG

LANGS = ("de", "fr", "it", "en", "rm")


def per_lang(catalog: Catalog) -> dict[str, Catalog]:
    return {lang: catalog.for_lang(lang) for lang in LANGS}


def test_keys_come_from_the_eli_path_and_refuse_partition_separators():
    assert eli_key(DSG) == "cc-2022-491"
    assert eli_key(f"{DSG}/20250401") == "cc-2022-491-20250401"
    assert eli_key("https://fedlex.data.admin.ch/eli/cc/27/317_321_377") == "cc-27-317_321_377"
    for bad in (
        "https://fedlex.data.admin.ch/cc/2022/491",
        "https://x/eli/",
        "https://x/eli/cc/1,2",
        "https://x/eli/a[1]",
    ):
        with pytest.raises(SnapshotError):
            eli_key(bad)


def test_the_new_edition_is_named_and_nothing_else_differs(before, after):
    _, changes = diff(Snapshot.of(per_lang(before)), per_lang(after))
    assert changes == [ActChange("de", "cc-2022-491", "new_edition", ("cc-2022-491-20250401",))]


def test_a_change_to_an_older_edition_is_a_changed_act_naming_no_edition(after):
    # Fedlex adds the French file of an existing edition: same dates, a file url where there was none.
    edited = tuple(
        replace(e, file_url="https://fedlex.example/fr.xml")
        if (e.consolidation, e.lang) == (f"{DSG}/20250401", "fr")
        else e
        for e in after.editions
    )
    _, changes = diff(Snapshot.of(per_lang(after)), per_lang(Catalog(after.acts, edited)))
    assert changes == [ActChange("fr", "cc-2022-491", "changed", ())]


def test_an_act_level_change_touches_every_language_of_the_act(after):
    repealed = tuple(replace(a, in_force_status=1) if a.eli == DSG else a for a in after.acts)
    _, changes = diff(Snapshot.of(per_lang(after)), per_lang(Catalog(repealed, after.editions)))
    assert [(c.lang, c.kind) for c in changes] == [
        ("de", "changed"),
        ("en", "changed"),
        ("fr", "changed"),
        ("it", "changed"),
    ]


def test_new_and_removed_acts(after):
    act = CatalogAct(
        "https://fedlex.data.admin.ch/eli/cc/2024/7", "999.1", 0, None, None, {"it": ActTitle("Legge", None)}
    )
    editions = (
        CatalogEdition(act.eli, f"{act.eli}/20240101", "it", date(2024, 1, 1), None, None),
        CatalogEdition(act.eli, f"{act.eli}/20250101", "it", date(2025, 1, 1), None, None),
    )
    grown = Catalog(after.acts + (act,), after.editions + editions)
    snapshot, changes = diff(Snapshot.of(per_lang(after)), per_lang(grown))
    assert changes == [ActChange("it", "cc-2024-7", "new_act", ("cc-2024-7-20240101", "cc-2024-7-20250101"))]
    _, changes = diff(snapshot, per_lang(after))
    assert changes == [ActChange("it", "cc-2024-7", "removed", ())]


def test_a_language_that_empties_is_refused_not_read_as_every_act_repealed(after):
    catalogs = per_lang(after)
    snapshot = Snapshot.of(catalogs)
    with pytest.raises(SnapshotError, match=r"\[de\].*no editions"):
        diff(snapshot, {**catalogs, "de": Catalog((), ())})


def test_unpolled_languages_are_not_removals(after):
    snapshot = Snapshot.of(per_lang(after))
    assert diff(snapshot, {"de": after.for_lang("de")})[1] == []


def test_cursor_round_trips_and_stays_small_at_fedlex_size():
    acts, editions = [], []
    for i in range(6000):  # about the classified compilation's size, four languages, six editions each
        eli = f"https://fedlex.data.admin.ch/eli/cc/{1900 + i % 120}/{i}"
        acts.append(CatalogAct(eli, f"{i}.1", 0, None, None, {}))
        for lang in LANGS[:4]:
            for k in range(6):
                day = date(2000 + 3 * k, 1, 1 + i % 28)
                editions.append(
                    CatalogEdition(eli, f"{eli}/{day:%Y%m%d}", lang, day, None, f"https://f/{i}/{k}/{lang}")
                )
    catalog = Catalog(tuple(acts), tuple(editions))
    snapshot = Snapshot.of({lang: catalog.for_lang(lang) for lang in LANGS[:4]})
    cursor = snapshot.encode()
    assert Snapshot.decode(cursor) == snapshot
    assert snapshot.pairs() == 24_000 and len(cursor) < 350_000  # ~14 bytes per (act, language)


def test_editions_of_an_act_missing_from_the_catalog_are_refused(after):
    de = after.for_lang("de")
    with pytest.raises(SnapshotError, match="no such act"):
        Snapshot.of({"de": Catalog(tuple(a for a in de.acts if a.eli != DSG), de.editions)})


def test_foreign_or_damaged_cursors_are_typed_errors(after):
    good = Snapshot.of(per_lang(after)).encode()
    other_format = base64.b64encode(zlib.compress(b'{"v": 0, "langs": {}}')).decode()
    wrong_width = base64.b64encode(zlib.compress(b'{"v": 1, "langs": ["de"], "acts": {"cc-1-1": ["", ""]}}')).decode()
    for cursor in ("not base64 at all!", good[: len(good) // 2], other_format, wrong_width):
        with pytest.raises(SnapshotError):
            Snapshot.decode(cursor)
