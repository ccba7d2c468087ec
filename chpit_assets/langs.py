"""The languages CH-PiT publishes (the card); Fedlex also publishes `en` and `rm`, which are parsed where present."""

BENCH_LANGS: tuple[str, ...] = ("de", "fr", "it")
