"""A small release in the published layout (issue 24), built from scratch for the tests: per
language N bench items, half of them core, with texts our scorer tells apart; the published
results folder holds an oracle and a recite log, the MCP cache the recite/current/pit contexts
of the first core items, and report-all.json computed from the logs' stored verdicts."""

from __future__ import annotations

import json
from pathlib import Path

from chpit_assets.files import write_atomic
from chpit_assets.publish.dataset import parquet_bytes
from chpit_assets.report.published import report_all, report_all_json
from chpit_assets.runs.runner import ITEM_FIELDS, verdict_of
from chpit_scorer import GROUNDED_CORRECT

LANGS = ("de", "fr", "it")
REVISION = "v2026.09"
WORDS = ("Frist", "Vertrag", "Kündigung", "Arbeitgeber", "Schaden", "Gericht", "Miete", "Zins", "Erbe", "Kauf")


def _text(n: int, version: str) -> str:
    a, b = WORDS[n % len(WORDS)], WORDS[(n // len(WORDS)) % len(WORDS)]
    return (
        f"1 Der {a} richtet sich nach dem Vertrag Nummer {n} und gilt für alle Parteien gleich.\n"
        f"2 Die {b} beträgt in der Fassung {version} genau {n + 3} Tage ab der schriftlichen Mitteilung."
    )


def _edition(n: int, version: str, start: str, end: str | None) -> dict:
    return {
        "version_id": n * 10 + (1 if version == "alt" else 2),
        "date_applicability": start,
        "date_end_applicability": end,
        "eli": f"https://fedlex.data.admin.ch/eli/cc/{n}/{start}",
        "source": "fedlex",
        "text": _text(n, version),
    }


def item(lang: str, n: int, core: bool) -> dict:
    kind = "before" if n % 2 else "after"
    old, new = _edition(n, "alt", "2010-01-01", "2019-12-31"), _edition(n, "neu", "2020-01-01", None)
    gold, distractor = (old, new) if kind == "before" else (new, old)
    as_of = "2019-12-31" if kind == "before" else "2020-01-01"
    return {
        "id": f"{lang}{n:014x}",
        "lang": lang,
        "act_id": 1000 + n,
        "sr_number": f"{200 + n}",
        "abbreviation": f"G{n}",
        "article_number": f"{n + 1}",
        "e_id": f"art_{n + 1}",
        "as_of": as_of,
        "kind": kind,
        "change_date": "2020-01-01",
        "question": f"Wie lautet Art. {n + 1} G{n} (SR {200 + n}) in der am {as_of} geltenden Fassung? Zitiere den Wortlaut.",
        "gold_is_current": gold["date_end_applicability"] is None,
        "gold": gold,
        "distractor": distractor,
        "source": "fedlex",
        "recite_label": None,
        "recite_as_of": None,
        "licence": "CC-BY-4.0",
        "build": REVISION,
        "core": core,
    }


def _jsonl(items) -> bytes:
    return "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items).encode("utf-8")


def cache_key(name: str, arguments: dict) -> str:
    return json.dumps([name, arguments], sort_keys=True, ensure_ascii=False)


def article_result(item: dict, edition: dict, as_of: str) -> dict:
    return {
        "sr_number": item["sr_number"],
        "abbreviation": item["abbreviation"],
        "title": "Gesetz",
        "lang": item["lang"],
        "as_of": as_of,
        "version": {
            "version_id": edition["version_id"],
            "date_applicability": edition["date_applicability"],
            "date_end_applicability": edition["date_end_applicability"],
            "eli_consolidation_uri": edition["eli"],
        },
        "article": {
            "e_id": item["e_id"],
            "article_number": item["article_number"],
            "marginal_note": None,
            "text": edition["text"],
        },
    }


def published_line(item: dict, system: str, mode: str, answer: str, **extra) -> dict:
    line = {"id": item["id"], "system": system, "model": None, "mode": mode, "lang": item["lang"], "answer": answer}
    return {**line, "verdict": verdict_of(answer, item), **extra}


def build_release(folder: Path, n: int = 8, cached: int = 2) -> dict[str, list[dict]]:
    """Write the release into `folder`; returns {lang: core items}. The MCP cache holds the
    contexts of the first `cached` core items per language (the rest are misses)."""
    files: dict[str, bytes] = {"README.md": b"---\nlicense: cc-by-4.0\n---\n# CH-PiT (test release)\n"}
    cores: dict[str, list[dict]] = {}
    report = {
        "seed": 20260825,
        "caps": {"per_lang_cap": n, "per_act_cap": 50, "core_per_lang": n // 2},
        "build": REVISION,
    }
    oracle, recite, cache = [], [], []
    for lang in LANGS:
        bench = [item(lang, i, core=i % 2 == 0) for i in range(n)]
        core = [i for i in bench if i["core"]]
        cores[lang] = core
        files[f"raw/bench-{lang}.jsonl"] = _jsonl(bench)
        files[f"raw/core-{lang}.jsonl"] = _jsonl(core)
        files[f"data/{lang}/full-00000.parquet"] = parquet_bytes(bench)
        files[f"data/{lang}/core-00000.parquet"] = parquet_bytes(core)
        report[lang] = {"changes_considered": n, "selected": n, "items": n, "skipped": {}, "core": {"items": len(core)}}
        for it in core:
            oracle.append(published_line(it, "oracle/oracle", "oracle", it["gold"]["text"]))
            today = _edition(int(it["id"][2:], 16), "neu", "2020-01-01", None)
            recite.append(published_line(it, "recite/recite", "recite", today["text"]))
        for it in core[:cached]:
            num = int(it["id"][2:], 16)
            base = {"sr_number": it["sr_number"], "article": it["article_number"], "lang": lang}
            today = _edition(num, "neu", "2020-01-01", None)
            cache.append(
                {"key": cache_key("ch_get_act_article", base), "result": article_result(it, today, "2026-09-04")}
            )
            cache.append(
                {
                    "key": cache_key("ch_get_act_article", {**base, "as_of": it["as_of"]}),
                    "result": article_result(it, it["gold"], it["as_of"]),
                }
            )
    assert all(line["verdict"]["label"] == GROUNDED_CORRECT for line in oracle)
    files["build-report.json"] = (json.dumps(report, indent=2) + "\n").encode()
    results = f"results/{REVISION}"
    files[f"{results}/results-oracle.jsonl"] = _jsonl(oracle)
    files[f"{results}/results-recite-recite.jsonl"] = _jsonl(recite)
    files[f"{results}/mcp-cache.jsonl"] = _jsonl(cache)
    by_id = {it["id"]: it for core in cores.values() for it in core}
    # As in v2026.09, the published table has no oracle row; the oracle's log is there all the same.
    joined = {"recite": [{**{k: by_id[line["id"]].get(k) for k in ITEM_FIELDS}, **line} for line in recite]}
    published = report_all(joined, file_order=True)
    files[f"{results}/report-all.json"] = report_all_json(published).encode()
    for rel, data in files.items():
        write_atomic(folder / rel, data)
    return cores
