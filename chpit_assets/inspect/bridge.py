"""Our systems asking Inspect's model: a `ChatClient` whose completions are Inspect `generate` calls.

The systems of chpit_assets.runs.systems run unchanged (the same prompts, the four tool rounds, the
§4 re-ask at the larger budget, the §5 tool log), so a CH-PiT task in Inspect gives the verdicts our
runner gives on the same answers. Messages and tool specs cross in the OpenAI shapes both sides know.
"""

from __future__ import annotations

import json
import threading
import time

import anyio.from_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolInfo

from chpit_assets.runs.client import ChatClient, ChatReply, EndpointConfig

INSPECT_URL = "inspect://"  # where an Inspect-driven model "is": no URL of ours, never a paid endpoint of ours
STOP_REASONS = {"max_tokens": "length", "model_length": "length", "tool_calls": "tool_calls", "stop": "stop"}


def to_inspect(messages: list[dict]) -> list[ChatMessage]:
    """OpenAI chat messages (what our systems build) -> Inspect messages."""
    out: list[ChatMessage] = []
    names: dict[str, str] = {}  # tool_call_id -> function, for the tool messages that answer them
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = [_tool_call(call) for call in message.get("tool_calls") or []]
            names.update({call.id: call.function for call in calls})
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            out.append(ChatMessageTool(content=content, tool_call_id=call_id, function=names.get(call_id)))
        else:
            raise ValueError(f"message role {role!r} has no Inspect counterpart")
    return out


def _tool_call(call: dict) -> ToolCall:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return ToolCall(id=call.get("id", ""), function=function.get("name", ""), arguments={}, parse_error=raw)
    return ToolCall(id=call.get("id", ""), function=function.get("name", ""), arguments=arguments or {})


def from_tool_call(call: ToolCall) -> dict:
    """An Inspect tool call -> the OpenAI shape our agentic loop reads (arguments as a JSON string)."""
    raw = call.parse_error if call.parse_error is not None else json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.function, "arguments": raw}}


def tool_infos(specs: list[dict]) -> list[ToolInfo]:
    """Our published tool specs (chpit_assets.pit.TOOL_SPECS) as Inspect tool definitions."""
    return [ToolInfo.model_validate(spec["function"]) for spec in specs]


def endpoint_for(model: Model) -> EndpointConfig:
    """What our receipts record about an Inspect model: its name and, when it has one, its base URL."""
    base_url = getattr(model.api, "base_url", None) or INSPECT_URL
    return EndpointConfig(base_url, str(model), reasoning_effort=None)


class InspectChatClient(ChatClient):
    """`ChatClient.chat` (with its §4 ladder) over Inspect's model; called from a worker thread while
    the Inspect sample's event loop runs, so each completion is handed back to that loop."""

    def __init__(self, model: Model, config: EndpointConfig | None = None):
        self.config = config or endpoint_for(model)
        self.model = model
        self._backoff = threading.local()  # ChatClient's per-thread retry clock (a line's latency excludes it)

    def close(self) -> None:
        pass  # Inspect owns the model and its connections

    def _complete(self, messages, tools, tool_choice, max_tokens: int) -> ChatReply:
        started = time.monotonic()
        config = GenerateConfig(temperature=self.config.temperature, max_tokens=max_tokens)
        output: ModelOutput = anyio.from_thread.run(
            lambda: self.model.generate(
                to_inspect(messages), tools=tool_infos(tools or []), tool_choice=tool_choice or None, config=config
            )
        )
        message = output.message
        calls = [from_tool_call(call) for call in message.tool_calls or []]
        usage = output.usage
        return ChatReply(
            content=message.text,
            tool_calls=calls,
            finish_reason=STOP_REASONS.get(output.stop_reason, output.stop_reason),
            model=output.model,
            provider=self.config.host or "inspect",
            prompt_tokens=usage.input_tokens if usage else None,
            completion_tokens=usage.output_tokens if usage else None,
            cost=None,
            latency_s=time.monotonic() - started,
            attempts=1,
            max_tokens=max_tokens,
            message={"role": "assistant", "content": message.text or None, **({"tool_calls": calls} if calls else {})},
        )
