"""Partition axes shared by the assets."""

from __future__ import annotations

import dagster as dg

from chpit_assets.fedlex.catalog import LANGS

BENCH_LANGS: tuple[str, ...] = ("de", "fr", "it")
"""The languages CH-PiT publishes; `en` and `rm` are parsed where Fedlex has them."""

lang_partitions = dg.StaticPartitionsDefinition(list(LANGS))
