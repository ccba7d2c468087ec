"""Benchmark: chpit_scorer fast path vs the plain-difflib reference path.

Builds realistic (answer, gold, distractor) cases from the real articles in
data/fedlex-sample (German, French, Italian): an article, an amendment of a
realistic shape applied to it (number changed, word changed, clause
appended, paragraph inserted, sentence removed), both halves (gold = new or
old edition), and answers of the kinds systems actually produce (gold or
distractor verbatim, typo'd, partial, another article, the right article in
another language, empty, long rambling). Like the builder (B12), a case is
kept only when its gold edition has a gold-only unit.

Every case is scored by the fast path; a fixed random subset is also scored
by the reference path, interleaved case by case with a cold-cache fast call
so both see the same machine noise. Verdicts must be identical (all fields)
or the script exits 1. ``--verify-all`` additionally checks every remaining
case against the reference path on all cores (correctness only, untimed).

    .venv/bin/python benchmarks/bench_scorer.py [--cases 15000] [--slow-subset 1500] [--verify-all]
        [--write docs/benchmarks.md]
    .venv/bin/python benchmarks/bench_scorer.py --smoke DIR     # 60 cases, 20 on the reference path
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import absolute, emit, machine, record  # noqa: E402
from chpit_assets.akn.parser import parse_edition  # noqa: E402
from chpit_scorer import partition, score  # noqa: E402
from chpit_scorer.core import _analyse_cached  # noqa: E402  (to measure cold-cache speed)

SAMPLE = ROOT / "data" / "fedlex-sample"


@functools.cache
def articles(relpath: str) -> dict[str, str]:
    """{e_id: text} of one sample file, as the pipeline parses it (the text items ship)."""
    return {a.e_id: a.text for a in parse_edition((SAMPLE / relpath).read_bytes(), relpath).articles if a.text}


FILES = {
    "de": ["cc-2022-491/20250707-de.xml", "cc-2004-745/20230901-de.xml", "cc-1999-404/20240303-de.xml"],
    "fr": ["cc-2022-491/20250707-fr.xml"],
    "it": ["cc-2022-491/20250707-it.xml"],
}
# The same act in the other languages, for wrong-language answers (S8).
PARALLEL = {
    "de": "cc-2022-491/20250707-de.xml",
    "fr": "cc-2022-491/20250707-fr.xml",
    "it": "cc-2022-491/20250707-it.xml",
}
WORDS = {
    "de": ["Bundesrat", "Kanton", "schriftlich", "unverzüglich", "Verantwortliche", "sechs"],
    "fr": ["Conseil fédéral", "canton", "par écrit", "sans délai", "responsable", "six"],
    "it": ["Consiglio federale", "Cantone", "per scritto", "senza indugio", "titolare", "sei"],
}
CLAUSES = {
    "de": [
        ", sofern das Gesetz nichts anderes vorsieht",
        " und zu begründen",
        "; der Bundesrat regelt die Einzelheiten",
    ],
    "fr": [", sauf disposition contraire de la loi", " et motivée", "; le Conseil fédéral règle les modalités"],
    "it": [", salvo diversa disposizione di legge", " e motivata", "; il Consiglio federale disciplina i dettagli"],
}
NEW_PARA = {
    "de": "Der Bundesrat kann Ausnahmen vorsehen, namentlich für Bearbeitungen zu nicht personenbezogenen Zwecken.",
    "fr": "Le Conseil fédéral peut prévoir des exceptions, notamment pour les traitements à des fins ne se rapportant pas à des personnes.",
    "it": "Il Consiglio federale può prevedere eccezioni, segnatamente per i trattamenti per scopi che non si riferiscono a persone.",
}
RAMBLE = {
    "de": "Hier ist der Wortlaut der Bestimmung, wie er zum genannten Zeitpunkt galt. Bitte beachten Sie, dass sich die Rechtslage seither geändert haben kann. ",
    "fr": "Voici le texte de la disposition tel qu'il était en vigueur à la date indiquée. Veuillez noter que la situation juridique a pu changer depuis. ",
    "it": "Ecco il testo della disposizione come era in vigore alla data indicata. Si noti che la situazione giuridica potrebbe essere cambiata da allora. ",
}


def amend(rng: random.Random, text: str, lang: str) -> tuple[str, str]:
    """A new edition of ``text``: (shape, amended text)."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    line = lines[i]
    shape = rng.choice(["number", "word", "clause", "paragraph", "sentence"])
    if shape == "number":
        spots = [k for k in range(len(line)) if line[k].isdigit() and k > 4]
        if spots:
            k = rng.choice(spots)
            line = line[:k] + str((int(line[k]) + rng.randint(1, 8)) % 10) + line[k + 1 :]
        else:
            shape, line = "clause", line.rstrip(".") + rng.choice(CLAUSES[lang]) + "."
    elif shape == "word":
        words = line.split(" ")
        k = rng.randrange(1, len(words)) if len(words) > 1 else 0
        words[k] = rng.choice(WORDS[lang])
        line = " ".join(words)
    elif shape == "clause":
        line = line.rstrip(".") + rng.choice(CLAUSES[lang]) + "."
    elif shape == "paragraph":
        num = line.split(" ", 1)[0]
        marker = f"{num}bis " if num.isdigit() else ""
        lines.insert(i + 1, marker + NEW_PARA[lang])
    else:
        cut = line.rfind(". ", 0, len(line) - 2)
        if cut > 0:
            line = line[: cut + 1]
        else:
            shape, line = "word", line.replace(" ", " " + rng.choice(WORDS[lang]) + " ", 1)
    lines[i] = line
    return shape, "\n".join(lines)


def typos(rng: random.Random, text: str, n: int) -> str:
    chars = list(text)
    for _ in range(n):
        k = rng.randrange(len(chars))
        if chars[k].isalpha():
            chars[k] = rng.choice("aeinrstu")
    return "".join(chars)


def answer_for(rng: random.Random, kind: str, gold: str, distractor: str, lang: str, e_id: str, pool: list[str]) -> str:
    if kind == "gold":
        return gold
    if kind == "distractor":
        return distractor
    if kind == "typo_gold":
        return typos(rng, gold, rng.randint(1, 4))
    if kind == "typo_distractor":
        return typos(rng, distractor, rng.randint(1, 4))
    if kind == "partial":
        lines = gold.split("\n")
        return "\n".join(lines[: max(1, len(lines) // 2)]) if len(lines) > 1 else gold[: len(gold) // 2]
    if kind == "other_article":
        return rng.choice(pool)
    if kind == "wrong_language":
        others = [articles(PARALLEL[o]).get(e_id) for o in PARALLEL if o != lang]
        return rng.choice([t for t in others if t] or pool)
    if kind == "empty":
        return ""
    # long rambling: prose around a slightly re-typed quote, 3-8k characters
    body = rng.choice([gold, distractor, typos(rng, gold, 2)])
    return RAMBLE[lang] * rng.randint(6, 20) + body + " " + RAMBLE[lang] * rng.randint(6, 20)


ANSWER_KINDS = [
    "gold",
    "distractor",
    "typo_gold",
    "typo_distractor",
    "partial",
    "other_article",
    "wrong_language",
    "empty",
    "long",
]


def build_cases(n: int, seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    pools = {}
    for lang, files in FILES.items():
        pools[lang] = [(f"{f}#{e}", e, t) for f in files for e, t in articles(f).items() if 200 <= len(t) <= 6000]
    cases: list[tuple[str, str, str]] = []
    while len(cases) < n:
        lang = rng.choice(["de", "de", "fr", "it"])
        _, e_id, text = rng.choice(pools[lang])
        _, new = amend(rng, text, lang)
        gold, distractor = (new, text) if rng.random() < 0.5 else (text, new)
        if new == text or not partition(gold, distractor).gold_only:
            continue  # B12: the builder would not ship this half
        texts = [t for _, _, t in pools[lang]]
        # several systems answer the same item, as in a real run
        for kind in rng.sample(ANSWER_KINDS, k=rng.randint(3, 6)):
            cases.append((answer_for(rng, kind, gold, distractor, lang, e_id, texts), gold, distractor))
    return cases[:n]


def _verify_chunk(chunk: list[tuple[str, str, str]]) -> list[int]:
    """Indices (within chunk) where fast and reference verdicts differ."""
    return [i for i, (a, g, d) in enumerate(chunk) if score(a, g, d) != score(a, g, d, fast=False)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=15_000)
    ap.add_argument("--slow-subset", type=int, default=1_500, help="cases timed on the reference path")
    ap.add_argument("--seed", type=int, default=20260825)
    ap.add_argument(
        "--verify-all", action="store_true", help="also check every other case against the reference (all cores)"
    )
    ap.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    ap.add_argument("--smoke", type=absolute, metavar="DIR", help="a tiny scale (nothing is written)")
    args = ap.parse_args()
    if args.smoke:
        args.cases, args.slow_subset = 60, 20

    print(machine())
    t0 = time.perf_counter()
    cases = build_cases(args.cases, args.seed)
    print(
        f"built {len(cases):,} cases in {time.perf_counter() - t0:.1f}s "
        f"(mean answer {sum(len(a) for a, _, _ in cases) / len(cases):,.0f} chars, "
        f"mean gold {sum(len(g) for _, g, _ in cases) / len(cases):,.0f} chars)"
    )

    # 1. Reference vs fast on a fixed random subset, interleaved per case.
    subset = sorted(random.Random(args.seed + 1).sample(range(len(cases)), min(args.slow_subset, len(cases))))
    slow_s = cold_s = 0.0
    mismatches = []
    for i in subset:
        a, g, d = cases[i]
        t = time.perf_counter()
        slow = score(a, g, d, fast=False)
        slow_s += time.perf_counter() - t
        _analyse_cached.cache_clear()  # no help from earlier cases: per-call speed
        t = time.perf_counter()
        quick = score(a, g, d)
        cold_s += time.perf_counter() - t
        if asdict(quick) != asdict(slow):
            mismatches.append(i)
    n_sub = len(subset)

    # 2. Fast path on every case, cold cache (every pair analysed afresh) ...
    quick_all = []
    t = time.perf_counter()
    for a, g, d in cases:
        _analyse_cached.cache_clear()
        quick_all.append(score(a, g, d))
    all_cold_s = time.perf_counter() - t
    # ... and as shipped: answers to one item reuse its pair analysis.
    _analyse_cached.cache_clear()
    t = time.perf_counter()
    warm = [score(a, g, d) for a, g, d in cases]
    all_warm_s = time.perf_counter() - t
    assert warm == quick_all, "cached and uncached fast verdicts differ"

    verified = n_sub
    if args.verify_all:
        rest = [c for k, c in enumerate(cases) if k not in set(subset)]
        chunks = [rest[k : k + 200] for k in range(0, len(rest), 200)]
        with ProcessPoolExecutor(max_workers=os.cpu_count()) as pool:
            for start, bad in zip(range(0, len(rest), 200), pool.map(_verify_chunk, chunks)):
                mismatches.extend(f"rest[{start + b}]" for b in bad)
        verified += len(rest)

    labels: dict[str, int] = {}
    for v in quick_all:
        labels[v.label] = labels.get(v.label, 0) + 1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = [
        f"labels (fast, all cases): {labels}",
        f"reference path, {n_sub:,} cases: {n_sub / slow_s:,.1f} cases/s",
        f"fast path, same cases, cold cache: {n_sub / cold_s:,.1f} cases/s ({slow_s / cold_s:,.0f}x)",
        f"fast path, all {len(cases):,}, cold cache: {len(cases) / all_cold_s:,.1f} cases/s",
        f"fast path, all {len(cases):,}, pair cache on: {len(cases) / all_warm_s:,.1f} cases/s",
        f"fast == reference verified on {verified:,} cases; mismatches: {len(mismatches)}",
        f"peak RSS: {peak_mb:,.0f} MB",
    ]
    print("\n".join(lines))
    if mismatches:
        print(f"MISMATCH at cases {mismatches[:20]}", file=sys.stderr)
        return 1
    if args.write:
        record(args.write, "Scorer: fast path vs the difflib reference", "\n".join(f"- {x}" for x in lines))
    emit(
        "bench_scorer",
        {
            "cases": len(cases),
            "reference_cases_per_s": round(n_sub / slow_s, 1),
            "fast_cold_cases_per_s": round(n_sub / cold_s, 1),
            "speedup_cold": round(slow_s / cold_s, 1),
            "fast_all_cold_cases_per_s": round(len(cases) / all_cold_s, 1),
            "fast_all_cached_cases_per_s": round(len(cases) / all_warm_s, 1),
            "verified": verified,
            "mismatches": len(mismatches),
            "peak_rss_mb": round(peak_mb),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
