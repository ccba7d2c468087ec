"""Partition axes shared by the assets.

Languages are a dynamic axis (issue 14.6): a language exists as a partition once something asked
to build it (`make run`, the nightly, the CLI's --langs), so `en` and `rm` do not show as
permanently missing on an instance that never builds them. The published three are registered
when the instance is set up (chpit_assets.instance.prepare_instance).
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from chpit_assets.fedlex.catalog import LANGS
from chpit_assets.langs import BENCH_LANGS

__all__ = ["BENCH_LANGS", "LANG_AXIS", "lang_partitions", "register_langs"]

LANG_AXIS = "lang"
lang_partitions = dg.DynamicPartitionsDefinition(name=LANG_AXIS)


def register_langs(instance: dg.DagsterInstance, langs: Iterable[str]) -> None:
    """Add languages to the `lang` axis (in LANGS order), refusing any Fedlex does not publish in."""
    langs = set(langs)
    unknown = sorted(langs - set(LANGS))
    if unknown:
        raise ValueError(f"unknown language(s) {unknown}; Fedlex publishes in {', '.join(LANGS)}")
    missing = [lang for lang in LANGS if lang in langs and not instance.has_dynamic_partition(LANG_AXIS, lang)]
    if missing:
        instance.add_dynamic_partitions(LANG_AXIS, missing)
