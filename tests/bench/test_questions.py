"""B19: questions name abbreviation and SR number; de/fr/it are the published templates and date
formats verbatim (PROTOCOL §3), en/rm ours."""

from datetime import date

import pytest

from chpit_assets.bench.questions import QuestionError, format_date, question


@pytest.mark.parametrize(
    "lang, day, written",
    [
        ("de", date(2025, 4, 1), "1. April 2025"),
        ("de", date(2022, 3, 15), "15. März 2022"),
        ("de", date(2024, 1, 9), "9. Januar 2024"),
        # PROTOCOL §3: a plain 1, no "1er" / "1°"; no leading zero.
        ("fr", date(2025, 4, 1), "1 avril 2025"),
        ("fr", date(2022, 8, 2), "2 août 2022"),
        ("fr", date(2023, 2, 28), "28 février 2023"),
        ("it", date(2025, 4, 1), "1 aprile 2025"),
        ("it", date(2021, 6, 5), "5 giugno 2021"),
        ("it", date(2022, 12, 31), "31 dicembre 2022"),
        ("en", date(2025, 4, 1), "1 April 2025"),
        ("rm", date(2025, 4, 1), "il 1. d'avrigl 2025"),
        ("rm", date(2021, 3, 7), "ils 7 da mars 2021"),
    ],
)
def test_dates_as_a_reader_writes_them(lang, day, written):
    assert format_date(day, lang) == written


@pytest.mark.parametrize(
    "lang, expected",
    [
        ("de", "Wie lautet Art. 336a OR (SR 220) in der am 1. Juli 2024 geltenden Fassung? Zitiere den Wortlaut."),
        ("fr", "Quel est le texte de l'art. 336a CO (RS 220) en vigueur le 1 juillet 2024 ? Citez-le mot à mot."),
        ("it", "Qual è il testo dell'art. 336a CO (RS 220) in vigore il 1 luglio 2024? Citalo alla lettera."),
    ],
)
def test_published_templates_verbatim(lang, expected):
    abbr = "OR" if lang == "de" else "CO"
    assert question(lang, "336a", abbr, "220", date(2024, 7, 1)) == expected


@pytest.mark.parametrize(
    "lang, months",
    [
        ("de", "Januar Februar März April Mai Juni Juli August September Oktober November Dezember"),
        ("fr", "janvier février mars avril mai juin juillet août septembre octobre novembre décembre"),
        ("it", "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre"),
    ],
)
def test_every_month_name(lang, months):
    written = [format_date(date(2020, m, 12), lang) for m in range(1, 13)]
    sep = ". " if lang == "de" else " "
    assert written == [f"12{sep}{name} 2020" for name in months.split()]


@pytest.mark.parametrize("lang", ["de", "fr", "it", "en", "rm"])
def test_every_language_names_abbreviation_number_and_date(lang):
    q = question(lang, "5a", "ABBR", "170.512", date(2023, 9, 1))
    assert "5a ABBR" in q and "170.512" in q and format_date(date(2023, 9, 1), lang) in q


def test_unknown_language_is_a_clear_error():
    with pytest.raises(QuestionError, match="'xx'"):
        question("xx", "1", "A", "1", date(2020, 1, 1))
