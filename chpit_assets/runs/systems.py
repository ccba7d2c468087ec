"""The six systems of R1 and the registry that turns a system key into one.

System keys: `oracle`, `recite` (no model), and `<model-slug>/<mode>` with mode
`closed`, `current`, `pit` or `agentic` (e.g. `smollm2-135m/pit`). Prompts are
the published runs' prompts verbatim (card "Baselines", R1b), so our numbers
compare with the card's.

Ours beside them (issue 16), never mixed into the published rows:
 * model-free `cite/current`, `cite/pit` (the citation and date read from the question text by
   our own parser, then `ch_get_act_article` without / with the date) and `search/pit` (the
   question text alone through `ch_search_articles`, on the date read from it): every build gets
   non-trivial rows in minutes, and `cite/pit` is the protocol's ceiling (1.000 unless a question
   or the parser is wrong);
 * mode variants `pit+verify`, `agentic+verify` (cite or abstain, chpit_assets/verify) and
   `agentic+search` (the search tool set: the published three tools plus `ch_search_articles`),
   and `agentic+search+verify`.

The registry (issue 26): every mode is one `Mode` entry in `MODES` (bottom of this module) saying
what it needs (a model, the edition it reads first, the tools) and which wrappers (`WRAPPERS`) its
key may add; `parse_system_key` turns a key into a typed `SystemKey` once, and the CLI, the runner,
the spend guard, the reports and the Inspect task read that instead of testing key strings.
Adding a mode is one entry plus its build function (docs/modes.md).
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from .client import ChatClient, ChatReply, EndpointConfig
from .errors import QuestionNotUnderstood, UnknownSystemError

MAX_TOOL_ROUNDS = 4  # R1, PROTOCOL §5: rounds 0-3 may call tools, round 4 must answer

# The card's closed-book system prompt, verbatim ("Baselines", closed).
CLOSED_SYSTEM_PROMPT = (
    "You are a Swiss legal database. Answer with the verbatim text of the requested article "
    "as in force on the given date, in the language of the question, nothing else."
)
# R1b: current and pit, verbatim; the user message is `{question}\n\n<context>\n{text}\n</context>`.
CONTEXT_SYSTEM_PROMPT = (
    "You are a Swiss legal database. The user asks for the verbatim text of an article as in force "
    "on a given date. A retrieved article text is provided between <context> tags. Answer with the "
    "verbatim article text from the context, in the language of the question, nothing else."
)
# PROTOCOL §4, agentic, verbatim: says the tools default to today's edition and deliberately does NOT
# tell the model to pass as_of -- deciding that is what is measured.
AGENTIC_SYSTEM_PROMPT = (
    "You are a Swiss legal research assistant with tools over Fedlex, the federal law collection. "
    "The user asks for the verbatim text of an article as in force on a specific date. Use the tools to "
    "retrieve the article, then answer with the verbatim article text in the language of the question, "
    "nothing else. Note that a tool returns the edition in force today unless told otherwise."
)
TOOL_RESULT_MAX_CHARS = 12000  # PROTOCOL §5: a tool result longer than this is cut and marked
TRUNCATED_MARK = "…[truncated]"
ESTIMATE_TOOL_ROUNDS = 3  # PROTOCOL §7: the agentic estimate assumes R = 3 tool rounds

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class SystemKey:
    """A system key parsed once (issue 26): `<slug>/<base>[+wrapper...]`, or a model-free mode's name."""

    key: str
    mode: str  # the run's mode, wrappers included ("agentic+verify"); a model-free system's key
    slug: str | None  # the model slug; None for the systems without a model
    wrappers: tuple[str, ...] = ()  # in key order, each a WRAPPERS name

    @property
    def base_mode(self) -> str:
        """The published mode a variant runs ("agentic+verify" -> "agentic")."""
        return base_mode(self.mode)

    @property
    def entry(self) -> Mode:
        return MODES[self.base_mode]

    @property
    def asks_model(self) -> bool:
        """Costs money and needs an endpoint (R3)."""
        return self.slug is not None

    @property
    def verify(self) -> bool:
        return "verify" in self.wrappers

    @property
    def tool_calls(self) -> bool:
        """The model calls the tools itself: its lines carry `tool_calls` (PROTOCOL §5)."""
        return self.entry.tools

    @property
    def tool_specs(self) -> list[dict]:
        """The tools offered to the model: the published three, or with `+search` the search set."""
        from chpit_assets.pit import SEARCH_TOOL_SPECS, TOOL_SPECS

        return SEARCH_TOOL_SPECS if "search" in self.wrappers else TOOL_SPECS

    @property
    def run_report(self) -> bool:
        """A published mode: its runs are summed up in `run-report-{mode}.json` (PROTOCOL §8)."""
        return self.entry.run_report

    @property
    def order(self) -> int:
        """The card's row order: the model-free systems, then closed < current < pit < agentic and the variants."""
        return ALL_MODES.index(self.mode)

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        return self.entry.estimate(item)


def base_mode(mode: str) -> str:
    return mode.split("+", 1)[0]


def mode_entry(mode: str) -> Mode:
    """The registry entry of a mode or a variant ("pit+verify" -> the `pit` entry)."""
    entry = MODES.get(base_mode(mode))
    if entry is None:
        raise UnknownSystemError(f"unknown mode {mode!r}: expected one of {', '.join(ALL_MODES)}")
    return entry


def published_name(key: str) -> str:
    """Our key -> the published runs' `system` for the systems without a model (`recite/recite`);
    our model-free systems' keys already have that shape (`cite/pit`)."""
    return key if "/" in key else f"{key}/{key}"


def our_key(published: str) -> str:
    """The inverse of `published_name` on a published system name (`recite/recite` -> `recite`)."""
    head, _, tail = published.partition("/")
    return head if head == tail and head in LOOKUP_MODES else published


@functools.lru_cache(maxsize=4096)
def parse_system_key(key: str) -> SystemKey:
    """A key of LOOKUP_MODES | `<model-slug>/<mode>`; anything else is an UnknownSystemError."""
    if key in LOOKUP_MODES:
        return SystemKey(key, key, None)
    slug, sep, mode = key.partition("/")
    base, *wrappers = mode.split("+")
    entry = MODES.get(base)
    if (
        sep
        and entry is not None
        and entry.model
        and mode in entry.variants
        and _SLUG.match(slug)
        and slug not in _RESERVED_SLUGS
    ):
        return SystemKey(key, mode, slug, tuple(wrappers))
    raise UnknownSystemError(
        f"unknown system key {key!r}: expected one of {', '.join(LOOKUP_MODES)} or '<model-slug>/<mode>' with mode in "
        f"{', '.join(MODEL_MODES)} and a slug of lower-case letters, digits, '.', '_' or '-'"
    )


def model_systems(keys: Sequence[str]) -> list[str]:
    """The keys that ask a model (`<model-slug>/<mode>`): what costs money and needs an endpoint."""
    return [key for key in keys if parse_system_key(key).asks_model]


@dataclass
class Answer:
    """What a system produced for one item, plus everything the receipt and the tools report need."""

    text: str | None
    error: str | None = None
    contexts: list[str] = field(default_factory=list)  # every text shown to the model (or looked up)
    prompt: list[dict] | None = None  # the first request's messages
    replies: list[ChatReply] = field(default_factory=list)
    tool_calls: list[dict] = field(default_factory=list)
    lookup: dict | None = None  # which act/edition a lookup used, as the tools report it
    extras: dict = field(default_factory=dict)  # the mode's published line extras (PROTOCOL §4, §5)


class System:
    """A system answers one item; it never scores (the runner does, with chpit_scorer)."""

    key: str
    mode: str
    config: EndpointConfig | None = None  # the EndpointConfig of a model system

    def answer(self, item: dict) -> Answer:
        raise NotImplementedError

    @property
    def parsed(self) -> SystemKey:
        return parse_system_key(self.key)

    def settings(self) -> dict:
        return {"system": self.key, "mode": self.mode}

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        return estimate_tokens(self.mode, item)

    def backoff_s(self) -> float:
        """Seconds this thread has waited between retries of a model call (none without a model)."""
        return 0.0


def tokens(text: str) -> int:
    """PROTOCOL §7: tokens = ceil(chars / 4)."""
    return math.ceil(len(text) / 4)


def estimate_tokens(mode: str, item: dict) -> tuple[int, int]:
    """(input, output) tokens of one item for the PROTOCOL §7 estimate, by the mode's registry entry;
    a lookup costs nothing, verification is free, a variant costs what its base mode costs."""
    return mode_entry(mode).estimate(item)


def _free(item: dict) -> tuple[int, int]:
    return 0, 0


def _answer_tokens(item: dict) -> int:
    return tokens(item["gold"]["text"]) + 50  # PROTOCOL §7 out: gold + 50


def _closed_estimate(item: dict) -> tuple[int, int]:
    """closed: sys + question."""
    return tokens(CLOSED_SYSTEM_PROMPT + item["question"]), _answer_tokens(item)


def _context_estimate(item: dict) -> tuple[int, int]:
    """current/pit: sys + question + gold + 40 characters (the published run-report-current.json's
    581,333 input tokens are that reading, not 40 tokens)."""
    text = CONTEXT_SYSTEM_PROMPT + item["question"] + item["gold"]["text"]
    return math.ceil((len(text) + 40) / 4), _answer_tokens(item)


def _agentic_estimate(item: dict) -> tuple[int, int]:
    """agentic: S = the tool specs' JSON, C = gold + 400 characters, R = 3 rounds: in = sum over
    r = 0..R of (sys + question) + S + r * C; out = gold + 50 + 60 R."""
    from chpit_assets.pit import TOOL_SPECS

    spec = tokens(json.dumps(TOOL_SPECS))  # the published list, as the published estimate dumped it
    per_round = math.ceil((len(item["gold"]["text"]) + 400) / 4)
    base = tokens(AGENTIC_SYSTEM_PROMPT + item["question"]) + spec
    rounds = ESTIMATE_TOOL_ROUNDS
    return sum(base + r * per_round for r in range(rounds + 1)), _answer_tokens(item) + 60 * rounds


def _lookup_fields(result) -> dict:
    """Which act, edition and article a lookup used (a `pit.tools.ArticleResult`); the text itself is
    hashed in the receipt, not copied twice. `as_of` is the day resolved, today's when defaulted."""
    return {
        "act_id": result.act.act_id,
        "version_id": result.edition.version_id,
        "e_id": result.e_id,
        "as_of": result.as_of.isoformat(),
        "as_of_defaulted": result.as_of_defaulted,
    }


class OracleSystem(System):
    """R1/R2: the database lookup by act_id and as_of, resolved the way the tool resolves; must score 1.000."""

    mode = key = "oracle"

    def __init__(self, tools):
        self.tools = tools

    def answer(self, item: dict) -> Answer:
        # By e_id, exactly: the oracle proves builder and scorer agree, so it must not guess an article.
        # An edition may repeat an e_id; the item's occurrence (when it carries one) names which.
        result = self.tools.resolve_by_act(
            item["act_id"], item["lang"], item["as_of"], e_id=item["e_id"], occurrence=item.get("occurrence")
        )
        return Answer(text=result.text, contexts=[result.text], lookup=_lookup_fields(result))


class ReciteSystem(System):
    """R1: today's edition from `ch_get_act_article` WITHOUT a date; correct exactly where the date does not matter."""

    mode = key = "recite"

    def __init__(self, tools):
        self.tools = tools

    def answer(self, item: dict) -> Answer:
        # No as_of: the tool answers with today's edition; lookup["as_of"] is that day (recite_as_of).
        result = self.tools.ch_get_act_article(item["sr_number"], item["article_number"], item["lang"])
        return Answer(text=result.text, contexts=[result.text], lookup=_lookup_fields(result))


class CiteSystem(System):
    """Issue 16, `cite/current` and `cite/pit`: read the citation (article, SR number) and, for pit,
    the date from the question TEXT with our own parser (chpit_assets.search.query), never from the
    item's fields, then ask `ch_get_act_article` as a model with perfect tool use would. A question
    the parser cannot read is an error on its line: it means the question or the parser is wrong."""

    def __init__(self, key: str, tools):
        self.key = self.mode = key
        self.tools = tools
        self.dated = mode_entry(key).context == "as_of"

    def answer(self, item: dict) -> Answer:
        from chpit_assets.search.query import parse_citation

        cited = parse_citation(item["question"], item["lang"])
        missing = [
            name
            for name, value in (
                ("article", cited.article),
                ("SR number", cited.sr_number),
                ("date", cited.as_of if self.dated else True),
            )
            if not value
        ]
        if missing:
            raise QuestionNotUnderstood(f"{self.key}: no {', '.join(missing)} in question {item['question']!r}")
        result = self.tools.ch_get_act_article(
            cited.sr_number, cited.article, item["lang"], as_of=cited.as_of if self.dated else None
        )
        return Answer(text=result.text, contexts=[result.text], lookup=_lookup_fields(result))


class SearchSystem(System):
    """Issue 16, `search/pit`: the question text alone goes to `ch_search_articles` on the date read
    from it (today when it names none); the best hit's article, as `ch_get_act_article` gives it on
    that date, is the answer. Measures what search over dated editions is worth without a model."""

    key = mode = "search/pit"

    def __init__(self, tools):
        self.tools = tools

    def answer(self, item: dict) -> Answer:
        from chpit_assets.search.query import parse_citation

        as_of = parse_citation(item["question"], item["lang"]).as_of
        found = self.tools.ch_search_articles(item["question"], item["lang"], as_of=as_of, limit=1)
        if not found.hits:
            return Answer(text="", lookup={"as_of": found.as_of.isoformat(), "hits": 0})
        top = found.hits[0]
        result = self.tools.ch_get_act_article(top.sr_number, top.article_number, item["lang"], as_of=found.as_of)
        return Answer(text=result.text, contexts=[result.text], lookup=_lookup_fields(result))


class _ModelSystem(System):
    def __init__(self, key: SystemKey, client: ChatClient):
        self.key, self.mode, self.slug = key.key, key.mode, key.slug
        self.dated = key.entry.context == "as_of"
        self.client = client
        self.config = client.config

    def settings(self) -> dict:
        return {**super().settings(), "model_slug": self.slug, **self.client.config.settings()}

    def backoff_s(self) -> float:
        return self.client.backoff_s()

    def _ask(self, messages: list[dict], contexts: list[str], lookup: dict | None = None, **extras) -> Answer:
        answer = Answer(text="", contexts=contexts, prompt=messages, lookup=lookup, extras=extras)
        try:
            reply = self.client.chat(messages)
        except Exception as exc:  # PROTOCOL §4: answer "", the error on the line; what was looked up stays
            answer.error = f"{type(exc).__name__}: {exc}"
            return answer
        # After the ladder the reply is accepted as it is; a blank one scores as "".
        answer.replies.append(reply)
        answer.text = reply.content or ""
        return answer


class ClosedSystem(_ModelSystem):
    """R1: the question only, no retrieval."""

    def answer(self, item: dict) -> Answer:
        messages = [
            {"role": "system", "content": CLOSED_SYSTEM_PROMPT},
            {"role": "user", "content": item["question"]},
        ]
        return self._ask(messages, [])


class ContextSystem(_ModelSystem):
    """R1/R1b, PROTOCOL §4: `current` hands the model the edition `ch_get_act_article` returns without a
    date (today's), `pit` the one it returns for the item's as_of. A miss is not an error: the model is
    still asked, with an empty context, and the line says `context_empty: true`."""

    def __init__(self, key: SystemKey, client: ChatClient, tools, call_tool):
        super().__init__(key, client)
        self.tools, self.call_tool = tools, call_tool

    def answer(self, item: dict) -> Answer:
        arguments = {"sr_number": item["sr_number"], "article": item["article_number"], "lang": item["lang"]}
        if self.dated:
            arguments["as_of"] = item["as_of"]
        result = self.call_tool(self.tools, "ch_get_act_article", arguments)
        article = (result.get("article") if "error" not in result else None) or {}
        text = article.get("text") or ""
        version = result.get("version") or {}
        tool_result = {"error": result.get("error"), "as_of": result.get("as_of", arguments.get("as_of"))}
        tool_result.update({k: version[k] for k in ("version_id", "date_applicability") if k in version})
        lookup = (
            None
            if not text
            else {"version_id": version.get("version_id"), "e_id": article.get("e_id"), "as_of": result.get("as_of")}
        )
        messages = [
            {"role": "system", "content": CONTEXT_SYSTEM_PROMPT},
            {"role": "user", "content": f"{item['question']}\n\n<context>\n{text}\n</context>"},
        ]
        extras = {"tool_result": tool_result, **({"context_empty": True} if not text else {})}
        return self._ask(messages, [text], lookup, **extras)


class UnknownToolCall(ValueError):
    """A model called a tool its run does not offer."""


def _truncated(content: str) -> str:
    if len(content) <= TOOL_RESULT_MAX_CHARS:
        return content
    return content[:TOOL_RESULT_MAX_CHARS] + TRUNCATED_MARK


def run_tool(call_tool, tools, name, arguments, offered: Sequence[str]) -> tuple[dict, str]:
    """One tool call as a model makes it (PROTOCOL §5): (the result, the content the model reads).

    A miss comes back as the tool's `{"error": ...}`; a call that raises (bad arguments, a tool this
    run does not offer) as `{"error": "{Type}: {msg}"}`: either way the model reads it and may try
    again. The content is the result's JSON, cut at TOOL_RESULT_MAX_CHARS and marked."""
    try:
        if name not in offered:  # a tool of another tool set is not this run's to call
            raise UnknownToolCall(f"unknown tool {str(name)[:60]!r}; tools are {', '.join(offered)}")
        result = call_tool(tools, name, arguments)
    except Exception as exc:  # the model's mistake, handed back to the model
        result = {"error": f"{type(exc).__name__}: {exc}"}
    return result, _truncated(json.dumps(result, ensure_ascii=False))


class AgenticSystem(_ModelSystem):
    """R1/R2, PROTOCOL §5: the model calls the point-in-time tools itself. Rounds 0-3 offer the tools;
    round 4 offers none (`tool_choice: "none"`), and a tool call there leaves the answer empty."""

    def __init__(self, key: SystemKey, client: ChatClient, tools, tool_specs: list[dict], call_tool):
        super().__init__(key, client)
        self.tools, self.tool_specs, self.call_tool = tools, tool_specs, call_tool

    def settings(self) -> dict:
        return {
            **super().settings(),
            "tools": sorted(spec["function"]["name"] for spec in self.tool_specs),
            "max_tool_rounds": MAX_TOOL_ROUNDS,
        }

    def answer(self, item: dict) -> Answer:
        messages: list[dict] = [
            {"role": "system", "content": AGENTIC_SYSTEM_PROMPT},
            {"role": "user", "content": item["question"]},
        ]
        answer = Answer(text="", prompt=[dict(m) for m in messages])
        try:
            self._loop(messages, answer)
        except Exception as exc:  # PROTOCOL §4: answer "", the error on the line; the calls made so far stay
            answer.text, answer.error = "", f"{type(exc).__name__}: {exc}"
        answer.extras = self._extras(item, answer.tool_calls)
        return answer

    def _loop(self, messages: list[dict], answer: Answer) -> None:
        """Rounds 0-3 offer the tools; round 4 offers none and must answer."""
        for round_no in range(MAX_TOOL_ROUNDS + 1):
            last = round_no == MAX_TOOL_ROUNDS
            if last:
                reply = self.client.chat(messages, tool_choice="none")
            else:
                reply = self.client.chat(messages, tools=self.tool_specs)
            answer.replies.append(reply)
            if not reply.tool_calls:
                answer.text = reply.content or ""
                return
            if last:
                return  # tool calls with no tools left: the answer stays ""
            messages.append(reply.message)
            for call in reply.tool_calls:
                messages.append(self._run_tool(call, round_no, answer))

    def _run_tool(self, call: dict, round_no: int, answer: Answer) -> dict:
        """Execute one tool call (`run_tool`), log it (PROTOCOL §5), return the tool message for the model."""
        function = call.get("function") or {}
        name, raw = function.get("name"), function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = raw
        t0 = time.monotonic()
        offered = [spec["function"]["name"] for spec in self.tool_specs]
        result, content = run_tool(self.call_tool, self.tools, name, arguments, offered)
        entry = {"round": round_no, "name": name, "arguments": arguments, "ok": "error" not in result}
        if not entry["ok"]:
            entry["error"] = result["error"]
        entry["latency_s"] = round(time.monotonic() - t0, 4)
        answer.tool_calls.append(entry)
        answer.contexts.append(content)
        return {"role": "tool", "tool_call_id": call.get("id", ""), "content": content}

    @staticmethod
    def _extras(item: dict, calls: list[dict]) -> dict:
        """PROTOCOL §5 line extras, over the `ch_get_act_article` calls: any with an `as_of`, any with
        the item's as_of, any naming the item's act and article (string equality)."""
        article_args = [
            c["arguments"] for c in calls if c["name"] == "ch_get_act_article" and isinstance(c["arguments"], dict)
        ]
        return {
            "n_tool_calls": len(calls),
            "as_of_any": any("as_of" in a for a in article_args),
            "as_of_passed": any(str(a.get("as_of")) == item["as_of"] for a in article_args if "as_of" in a),
            "sr_article_correct": any(
                str(a.get("sr_number")) == str(item["sr_number"])
                and str(a.get("article")) == str(item["article_number"])
                for a in article_args
            ),
        }


class VerifiedSystem(System):
    """Issue 16, `<slug>/pit+verify`, `<slug>/agentic+verify`: the inner system's answer through cite
    or abstain (chpit_assets/verify). Evidence: every article the system retrieved (its context, its
    `ch_get_act_article` calls) or cited in its answer, each as the edition in force on the item's
    as_of words it. The line keeps the inner system's calls, tokens and cost, and records every
    check (`verification`) and whether it abstained."""

    def __init__(self, key: SystemKey, inner: System, tools):
        self.key, self.mode = key.key, key.mode
        self.inner, self.tools = inner, tools
        self.config = inner.config

    def settings(self) -> dict:
        return {**self.inner.settings(), "system": self.key, "mode": self.mode, "verify": True}

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        return self.inner.estimate_tokens(item)

    def backoff_s(self) -> float:
        return self.inner.backoff_s()

    def answer(self, item: dict) -> Answer:
        from chpit_assets.verify import Evidence, references, verify_answer

        answer = self.inner.answer(item)
        wanted = {(item["sr_number"], item["article_number"])} if answer.lookup else set()
        for call in answer.tool_calls:
            args = call.get("arguments")
            if call.get("name") == "ch_get_act_article" and isinstance(args, dict) and args.get("article"):
                wanted.add((str(args.get("sr_number")), str(args["article"])))
        for number, abbreviation in references(answer.text or ""):
            # An article the answer names in its own act (or without naming an act) is fetched too.
            if abbreviation is None or abbreviation == item["abbreviation"]:
                wanted.add((item["sr_number"], number))
        evidence, misses = [], []
        for sr_number, article in sorted(wanted):
            try:
                found = self.tools.ch_get_act_article(sr_number, article, item["lang"], as_of=item["as_of"])
            except Exception as exc:  # an article the store cannot give proves nothing; recorded
                misses.append(f"SR {sr_number} Art. {article}: {type(exc).__name__}")
                continue
            evidence.append(Evidence(sr_number, found.act.abbreviation, article, found.text, found.edition.version_id))
        checked = verify_answer(answer.text or "", evidence)
        answer.extras = {
            **answer.extras,
            "abstained": checked.abstained,
            "verification": {**checked.receipt(), "evidence_missing": misses},
        }
        answer.text = checked.answer
        return answer


def build_system(key: str, *, tools=None, clients: Mapping[str, ChatClient] | None = None) -> System:
    """A system for `key` from its registry entry, or UnknownSystemError before anything is asked."""
    parsed = parse_system_key(key)
    client = None
    if parsed.asks_model:
        client = (clients or {}).get(parsed.slug or "")
        if client is None:
            raise UnknownSystemError(
                f"system {key!r}: no endpoint configured for model {parsed.slug!r} (configured: {sorted(clients or {})})"
            )
    system = parsed.entry.build(parsed, tools, client)
    if parsed.verify:
        return VerifiedSystem(parsed, system, tools)
    return system


def _call_tool():
    from chpit_assets.pit import call_tool

    return call_tool


@dataclass(frozen=True)
class Mode:
    """One registry entry: what a mode needs and how it composes (issue 26).

    `context` is the edition the system reads before it answers: "as_of" (the item's date), "today"
    (no date), None (nothing up front: closed reads nothing, agentic decides itself with its tools)."""

    name: str
    build: Callable[[SystemKey, Any, Any], System]  # (parsed key, PitTools, ChatClient or None) -> System
    model: bool = False  # asks a model: `<slug>/<name>` keys; else the key is the name
    prompt: str | None = None  # a model's system prompt (R1b, PROTOCOL §4)
    context: str | None = None
    tools: bool = False  # the model calls the point-in-time tools itself (PROTOCOL §5)
    wrappers: tuple[str, ...] = ()  # the WRAPPERS its key may add, in key order
    run_report: bool = False  # a published mode with a run-report-{mode}.json (PROTOCOL §8)
    estimate: Callable[[dict], tuple[int, int]] = _free  # PROTOCOL §7 (input, output) tokens

    @property
    def variants(self) -> tuple[str, ...]:
        """The mode and every key mode its wrappers make: one wrapper before two, in key order."""
        combos = [c for n in range(1, len(self.wrappers) + 1) for c in combinations(self.wrappers, n)]
        return (self.name, *("+".join((self.name, *c)) for c in combos))


# What a wrapper does; every wrapper a mode accepts composes with every other it accepts.
WRAPPERS = {
    "search": "offers the search tool set: the published three tools plus ch_search_articles",
    "verify": "puts the answer through cite or abstain (chpit_assets/verify, VerifiedSystem)",
}

MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode("oracle", lambda parsed, tools, client: OracleSystem(tools), context="as_of"),
        Mode("recite", lambda parsed, tools, client: ReciteSystem(tools), context="today", run_report=True),
        Mode("cite/current", lambda parsed, tools, client: CiteSystem(parsed.key, tools), context="today"),
        Mode("cite/pit", lambda parsed, tools, client: CiteSystem(parsed.key, tools), context="as_of"),
        Mode("search/pit", lambda parsed, tools, client: SearchSystem(tools), context="as_of"),
        Mode(
            "closed",
            lambda parsed, tools, client: ClosedSystem(parsed, client),
            model=True,
            prompt=CLOSED_SYSTEM_PROMPT,
            run_report=True,
            estimate=_closed_estimate,
        ),
        *(
            Mode(
                name,
                lambda parsed, tools, client: ContextSystem(parsed, client, tools, _call_tool()),
                model=True,
                prompt=CONTEXT_SYSTEM_PROMPT,
                context=context,
                wrappers=wrappers,
                run_report=True,
                estimate=_context_estimate,
            )
            for name, context, wrappers in (("current", "today", ()), ("pit", "as_of", ("verify",)))
        ),
        Mode(
            "agentic",
            lambda parsed, tools, client: AgenticSystem(parsed, client, tools, parsed.tool_specs, _call_tool()),
            model=True,
            prompt=AGENTIC_SYSTEM_PROMPT,
            tools=True,
            wrappers=("search", "verify"),
            run_report=True,
            estimate=_agentic_estimate,
        ),
    )
}
LOOKUP_MODES = tuple(name for name, mode in MODES.items() if not mode.model)  # model-free: the key is the mode
FREE_SYSTEMS = tuple(name for name in LOOKUP_MODES if "/" in name)  # model-free, ours (issue 16)
_BASE_MODES = [mode for mode in MODES.values() if mode.model]
MODEL_MODES = (*(m.name for m in _BASE_MODES), *(v for m in _BASE_MODES for v in m.variants[1:]))
ALL_MODES = (*LOOKUP_MODES, *MODEL_MODES)
_RESERVED_SLUGS = frozenset(name.partition("/")[0] for name in FREE_SYSTEMS)  # `cite/pit` is no model's pit
