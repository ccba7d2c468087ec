"""B19: questions name abbreviation and SR number, dates written as in each language."""

from datetime import date

import pytest

from chpit_assets.bench.questions import QuestionError, format_date, question


@pytest.mark.parametrize(
    "lang, day, written",
    [
        ("de", date(2025, 4, 1), "1. April 2025"),
        ("de", date(2022, 3, 15), "15. März 2022"),
        ("fr", date(2025, 4, 1), "1er avril 2025"),
        ("fr", date(2022, 8, 2), "2 août 2022"),
        ("it", date(2025, 4, 1), "1° aprile 2025"),
        ("it", date(2022, 12, 31), "31 dicembre 2022"),
        ("en", date(2025, 4, 1), "1 April 2025"),
        ("rm", date(2025, 4, 1), "il 1. d'avrigl 2025"),
        ("rm", date(2021, 3, 7), "ils 7 da mars 2021"),
    ],
)
def test_dates_as_a_reader_writes_them(lang, day, written):
    assert format_date(day, lang) == written


def test_german_question_matches_the_card_form():
    assert question("de", "24", "DSG", "235.1", date(2025, 4, 1)) == (
        "Wie lautet Art. 24 DSG (SR 235.1) in der am 1. April 2025 geltenden Fassung?"
    )


@pytest.mark.parametrize("lang", ["de", "fr", "it", "en", "rm"])
def test_every_language_names_abbreviation_number_and_date(lang):
    q = question(lang, "5a", "ABBR", "170.512", date(2023, 9, 1))
    assert "5a ABBR" in q and "170.512" in q and format_date(date(2023, 9, 1), lang) in q


def test_unknown_language_is_a_clear_error():
    with pytest.raises(QuestionError, match="'xx'"):
        question("xx", "1", "A", "1", date(2020, 1, 1))
