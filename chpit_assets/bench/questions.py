"""B19: the question of an item, in its language, naming the act by abbreviation and SR number.

de, fr and it use the published CH-PiT templates and date formats verbatim (PROTOCOL §3): models
see them, so they must be the same for our numbers to compare. The day has no leading zero and the
first of a month is a plain `1` in every language (no "1er", no "1°"), as published.

en and rm have no published template (the published build has de, fr and it only); theirs are
ours, worded like the de one, with the date as running text of that language writes it
("1 April 2025"; Romansh Grischun "il 1. d'avrigl 2025").
"""

from __future__ import annotations

from datetime import date


class QuestionError(ValueError):
    """No question template for a language."""


MONTHS = {
    "de": (
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ),
    "fr": (
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ),
    "it": (
        "gennaio",
        "febbraio",
        "marzo",
        "aprile",
        "maggio",
        "giugno",
        "luglio",
        "agosto",
        "settembre",
        "ottobre",
        "novembre",
        "dicembre",
    ),
    "en": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    # Romansh Grischun as Fedlex writes it ("ils 7 da mars 2021", "dals 18 d'avrigl 1999").
    "rm": (
        "schaner",
        "favrer",
        "mars",
        "avrigl",
        "matg",
        "zercladur",
        "fanadur",
        "avust",
        "settember",
        "october",
        "november",
        "december",
    ),
}


def format_date(day: date, lang: str) -> str:
    """`day` as written in running text of `lang` (rm includes its article: "il 1." / "ils 7")."""
    if lang not in MONTHS:
        raise QuestionError(f"no date format for language {lang!r}")
    month = MONTHS[lang][day.month - 1]
    d = day.day
    if lang == "de":
        return f"{d}. {month} {day.year}"
    if lang in ("fr", "it", "en"):
        return f"{d} {month} {day.year}"
    prep = "d'" if month[0] in "aeiou" else "da "
    return f"il 1. {prep}{month} {day.year}" if d == 1 else f"ils {d} {prep}{month} {day.year}"


_TEMPLATES = {
    "de": "Wie lautet Art. {n} {abbr} (SR {sr}) in der am {date} geltenden Fassung? Zitiere den Wortlaut.",
    "fr": "Quel est le texte de l'art. {n} {abbr} (RS {sr}) en vigueur le {date} ? Citez-le mot à mot.",
    "it": "Qual è il testo dell'art. {n} {abbr} (RS {sr}) in vigore il {date}? Citalo alla lettera.",
    "en": "What is the wording of Art. {n} {abbr} (SR {sr}) in the version in force on {date}?",
    "rm": "Co tuna l'art. {n} {abbr} (CS {sr}) en la versiun en vigur {date}?",
}


def question(lang: str, article_number: str, abbreviation: str, sr_number: str, as_of: date) -> str:
    """The item's question (B19): never the act's title, always abbreviation + SR number + date."""
    if lang not in _TEMPLATES:
        raise QuestionError(f"no question template for language {lang!r}")
    return _TEMPLATES[lang].format(n=article_number, abbr=abbreviation, sr=sr_number, date=format_date(as_of, lang))
