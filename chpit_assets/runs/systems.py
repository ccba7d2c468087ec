"""The six systems of R1 and the registry that turns a system key into one.

System keys: `oracle`, `recite` (no model), and `<model-slug>/<mode>` with mode
`closed`, `current`, `pit` or `agentic` (e.g. `smollm2-135m/pit`). Prompts are
the published runs' prompts verbatim (card "Baselines", R1b), so our numbers
compare with the card's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .client import ChatClient, ChatReply
from .errors import ModelCallError, UnknownSystemError

LOOKUP_MODES = ("oracle", "recite")
MODEL_MODES = ("closed", "current", "pit", "agentic")
MAX_TOOL_ROUNDS = 4  # R1: up to four tool rounds, then a forced answer

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
# Card, agentic: says the tools default to today's edition and the question names a date, and
# deliberately does NOT tell the model to pass as_of -- deciding that is what is measured.
AGENTIC_SYSTEM_PROMPT = (
    "You are a Swiss legal database with tools over the consolidated Swiss federal law (Fedlex). "
    "The tools return today's edition unless told otherwise; the user's question names a date. "
    "Answer with the verbatim text of the requested article as in force on the given date, "
    "in the language of the question, nothing else."
)
FORCED_ANSWER_PROMPT = "No more tool calls are available. Answer now with the verbatim article text."

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class SystemKey:
    key: str
    mode: str
    slug: str | None  # the model slug; None for oracle and recite


def parse_system_key(key: str) -> SystemKey:
    """`oracle` | `recite` | `<model-slug>/<mode>`; anything else is an UnknownSystemError."""
    if key in LOOKUP_MODES:
        return SystemKey(key, key, None)
    slug, sep, mode = key.partition("/")
    if sep and mode in MODEL_MODES and _SLUG.match(slug):
        return SystemKey(key, mode, slug)
    raise UnknownSystemError(
        f"unknown system key {key!r}: expected 'oracle', 'recite' or '<model-slug>/<mode>' with mode in "
        f"{', '.join(MODEL_MODES)} and a slug of lower-case letters, digits, '.', '_' or '-'"
    )


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


class System:
    """A system answers one item; it never scores (the runner does, with chpit_scorer)."""

    key: str
    mode: str

    def answer(self, item: dict) -> Answer:
        raise NotImplementedError

    def settings(self) -> dict:
        return {"system": self.key, "mode": self.mode}

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        """(input, output) tokens for the cost estimate: about 3.5 characters per token for these languages."""
        return 0, 0


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


def _tokens(chars: int) -> int:
    return int(chars / 3.5) + 1


class OracleSystem(System):
    """R1/R2: the database lookup by act_id and as_of, resolved the way the tool resolves; must score 1.000."""

    mode = key = "oracle"

    def __init__(self, tools):
        self.tools = tools

    def answer(self, item: dict) -> Answer:
        # By e_id, exactly: the oracle proves builder and scorer agree, so it must not guess an article.
        result = self.tools.resolve_by_act(item["act_id"], item["lang"], item["as_of"], e_id=item["e_id"])
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


class _ModelSystem(System):
    def __init__(self, key: SystemKey, client: ChatClient):
        self.key, self.mode, self.slug = key.key, key.mode, key.slug
        self.client = client

    def settings(self) -> dict:
        return {**super().settings(), "model_slug": self.slug, **self.client.config.settings()}

    def _ask(self, messages: list[dict], contexts: list[str], lookup: dict | None = None) -> Answer:
        reply = self.client.chat(messages)
        if not isinstance(reply.content, str):
            raise ModelCallError(f"{self.key}: reply has no text content (finish_reason {reply.finish_reason!r})")
        return Answer(text=reply.content, contexts=contexts, prompt=messages, replies=[reply], lookup=lookup)


class ClosedSystem(_ModelSystem):
    """R1: the question only, no retrieval."""

    def answer(self, item: dict) -> Answer:
        messages = [
            {"role": "system", "content": CLOSED_SYSTEM_PROMPT},
            {"role": "user", "content": item["question"]},
        ]
        return self._ask(messages, [])

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        return _tokens(len(CLOSED_SYSTEM_PROMPT) + len(item["question"])), _tokens(len(item["gold"]["text"]))


class ContextSystem(_ModelSystem):
    """R1/R1b: `current` hands the model today's edition, `pit` the edition valid on as_of, both via the tool."""

    def __init__(self, key: SystemKey, client: ChatClient, tools):
        super().__init__(key, client)
        self.tools = tools

    def answer(self, item: dict) -> Answer:
        as_of = item["as_of"] if self.mode == "pit" else None
        result = self.tools.ch_get_act_article(item["sr_number"], item["article_number"], item["lang"], as_of=as_of)
        text = result.text
        messages = [
            {"role": "system", "content": CONTEXT_SYSTEM_PROMPT},
            {"role": "user", "content": f"{item['question']}\n\n<context>\n{text}\n</context>"},
        ]
        return self._ask(messages, [text], _lookup_fields(result))

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        chars = len(CONTEXT_SYSTEM_PROMPT) + len(item["question"]) + len(item["gold"]["text"]) + 30
        return _tokens(chars), _tokens(len(item["gold"]["text"]))


class AgenticSystem(_ModelSystem):
    """R1/R2: the model calls the point-in-time tools itself; four tool rounds, then a forced answer."""

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
        answer = Answer(text=None, prompt=[dict(m) for m in messages])
        for round_no in range(1, MAX_TOOL_ROUNDS + 2):
            forced = round_no > MAX_TOOL_ROUNDS
            if forced:
                messages.append({"role": "user", "content": FORCED_ANSWER_PROMPT})
                reply = self.client.chat(messages)  # no tools offered: the model must answer
            else:
                reply = self.client.chat(messages, tools=self.tool_specs, tool_choice="auto")
            answer.replies.append(reply)
            if forced or not reply.tool_calls:
                if not isinstance(reply.content, str):
                    raise ModelCallError(f"{self.key}: final reply has no text content (round {round_no})")
                answer.text = reply.content
                return answer
            messages.append({"role": "assistant", "content": reply.content, "tool_calls": reply.tool_calls})
            for call in reply.tool_calls:
                messages.append(self._run_tool(call, round_no, answer))
        raise AssertionError("unreachable: the forced round always returns")

    def _run_tool(self, call: dict, round_no: int, answer: Answer) -> dict:
        """Execute one tool call, log its arguments (R3), and return the tool message for the model.

        A call the tools cannot answer (bad arguments, unknown article, no edition on the date) comes
        back as `{"error": ...}` for the model to read and retry; a store failure raises and errors the item."""
        function = call.get("function") or {}
        name, raw = function.get("name"), function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = None
        parsed = isinstance(arguments, dict)
        result = self.call_tool(self.tools, name, raw)
        answer.tool_calls.append(
            {
                "round": round_no,
                "name": name,
                "arguments": arguments if parsed else None,
                "raw_arguments": None if parsed else raw,
                "error": result.get("error"),
            }
        )
        content = json.dumps(result, ensure_ascii=False, sort_keys=True)
        answer.contexts.append(content)
        return {"role": "tool", "tool_call_id": call.get("id", ""), "content": content}

    def estimate_tokens(self, item: dict) -> tuple[int, int]:
        # Typically three calls whose history carries the article text (and today's) twice.
        text = len(item["gold"]["text"])
        per_call = len(AGENTIC_SYSTEM_PROMPT) + len(item["question"]) + 3000
        return _tokens(3 * per_call + 4 * text), _tokens(text + 400)


def build_system(key: str, *, tools=None, clients: Mapping[str, ChatClient] | None = None) -> System:
    """The registry: a system for `key`, or UnknownSystemError before anything is asked."""
    parsed = parse_system_key(key)
    if parsed.mode == "oracle":
        return OracleSystem(tools)
    if parsed.mode == "recite":
        return ReciteSystem(tools)
    client = (clients or {}).get(parsed.slug)
    if client is None:
        raise UnknownSystemError(
            f"system {key!r}: no endpoint configured for model {parsed.slug!r} (configured: {sorted(clients or {})})"
        )
    if parsed.mode == "closed":
        return ClosedSystem(parsed, client)
    if parsed.mode in ("current", "pit"):
        return ContextSystem(parsed, client, tools)
    from chpit_assets.pit.tools import TOOL_SPECS, call_tool

    return AgenticSystem(parsed, client, tools, TOOL_SPECS, call_tool)
