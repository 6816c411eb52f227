"""What the reference endpoint says to an agent: reasoning first, then a tool call or an answer
shaped by the requested JSON schema — as a reasoning model behind an agent streams it.

- **Reasoning** (a profile's `reasoning:`): `tokens_for(reasoning_effort)` seeded words, streamed
  before anything else; they count in `completion_tokens` and in `max_tokens` (OpenAI's
  accounting), and usage reports them in `completion_tokens_details.reasoning_tokens`.
- **Tool calls**: a request with `tools` calls one unless `tool_choice` is `none`, or it is
  `auto` (or absent) and the conversation's last message is a tool result (the agent then
  answers). A named `tool_choice` calls that tool; otherwise the tool is picked by the seeded RNG.
  The arguments are an instance of the tool's `parameters` schema (`instance_of`), streamed as
  one-token pieces after a first piece carrying the call's id and name; the finish reason is
  `tool_calls`.
- **Structured output**: `response_format` `json_schema` answers with an instance of its
  schema; `json_object` with `{"answer": "<words>"}`.
A schema-shaped answer or a tool call is *constrained*: the engine charges the profile's
`constrained_decode_ms_per_token` for each of its tokens. Output past `max_tokens` is cut
(finish reason `length`), a cut JSON text included, as a real server would.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, replace
from typing import Any, Literal

from pipeline.reference.generation import VOCABULARY, GenerationRequest, Reply, Writer, split_into_pieces
from pipeline.reference.serving_profile import ReasoningConfig


@dataclass(frozen=True)
class AgentRequest:
    """The parts of a chat request that shape an agent's reply."""

    tools: list[dict] | None = None
    tool_choice: str | dict | None = None
    response_format: dict | None = None
    reasoning_effort: str | None = None
    enable_thinking: bool | None = None

    @property
    def schema(self) -> dict | None:
        """The JSON schema the answer must follow (json_schema), `{}` for json_object, else None."""
        kind = (self.response_format or {}).get("type")
        if kind == "json_schema":
            spec = self.response_format.get("json_schema") or {}  # type: ignore[union-attr]
            return spec.get("schema") or {}
        return {} if kind == "json_object" else None


@dataclass(frozen=True)
class AgentReply:
    """A reply in the order it streams: reasoning pieces, then a tool call's pieces or the answer."""

    reasoning: list[str]
    answer: Reply
    tool_call: dict | None = None  # {"id", "name", "arguments"} (the arguments as JSON text)
    tool_pieces: list[str] | None = None  # pieces after the first (id + name) one
    constrained: bool = False

    @property
    def finish_reason(self) -> str:
        return (
            "tool_calls"
            if self.tool_call is not None and self.answer.finish_reason != "length"
            else self.answer.finish_reason
        )

    @property
    def pieces(self) -> int:
        """Tokens the engine generates for it."""
        tool = 1 + len(self.tool_pieces or []) if self.tool_call is not None else 0
        return len(self.reasoning) + len(self.answer.pieces) + tool


def agent_reply(
    request: GenerationRequest, agent: AgentRequest, writer: Writer, reasoning: ReasoningConfig | None
) -> AgentReply:
    """The reply to `request`: its reasoning, then a tool call, a schema instance or the writer's answer."""
    rng = random.Random(request.profile.seed + _digest(request, agent))
    n_reasoning = 0
    if reasoning is not None and request.kind == "chat":
        n_reasoning = min(reasoning.tokens_for(agent.reasoning_effort, agent.enable_thinking), request.max_tokens)
    thoughts = [(" " if i else "") + rng.choice(VOCABULARY) for i in range(n_reasoning)]
    budget = request.max_tokens - n_reasoning
    tool = _chosen_tool(agent, request.messages or [], rng)
    if tool is not None:
        function = tool.get("function") or {}
        arguments = json.dumps(instance_of(function.get("parameters") or {"type": "object"}, rng))
        pieces = split_into_pieces(arguments)
        call = {"id": f"call_{rng.getrandbits(48):012x}", "name": function.get("name", ""), "arguments": arguments}
        kept = pieces[: max(budget - 1, 0)]
        finish: Literal["stop", "length"] = "length" if budget < 1 + len(pieces) else "stop"
        call["arguments"] = "".join(kept)  # what was sent, cut where max_tokens cut it
        return AgentReply(thoughts, Reply([], finish), call if budget >= 1 else None, kept, constrained=True)
    schema = agent.schema
    if schema is not None:
        text = json.dumps(instance_of(schema, rng) if schema else {"answer": " ".join(rng.sample(VOCABULARY, 3))})
        pieces = split_into_pieces(text)
        return AgentReply(
            thoughts, Reply(pieces[:budget], "length" if budget < len(pieces) else "stop"), constrained=True
        )
    return AgentReply(thoughts, writer(replace(request, max_tokens=budget)))


def spoil_tool_call(reply: AgentReply) -> AgentReply:
    """The `bad_tool_args` fault: the call's arguments without their first property, as a model
    that drops a required argument sends them (schema-invalid where that property is required)."""
    if reply.tool_call is None:
        return reply
    try:
        arguments = json.loads(reply.tool_call["arguments"] or "{}")
    except ValueError:  # already cut by max_tokens: invalid as it is
        return reply
    spoiled = json.dumps(dict(list(arguments.items())[1:])) if isinstance(arguments, dict) else "{"
    pieces = split_into_pieces(spoiled)
    return replace(reply, tool_call={**reply.tool_call, "arguments": spoiled}, tool_pieces=pieces)


def _digest(request: GenerationRequest, agent: AgentRequest) -> int:
    key = {"prompt": request.messages or request.prompt, "tools": agent.tools, "format": agent.response_format}
    return int.from_bytes(hashlib.sha256(json.dumps(key, sort_keys=True).encode()).digest()[:8], "big")


def _chosen_tool(agent: AgentRequest, messages: list[dict], rng: random.Random) -> dict | None:
    tools = [t for t in agent.tools or [] if t.get("type", "function") == "function"]
    choice = agent.tool_choice
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        return next((t for t in tools if (t.get("function") or {}).get("name") == wanted), None)
    if choice in (None, "auto") and messages and messages[-1].get("role") == "tool":
        return None  # the tool's result is in: the agent answers
    return tools[rng.randrange(len(tools))]


def instance_of(schema: dict, rng: random.Random, depth: int = 0) -> Any:
    """A value that validates against `schema` (the JSON Schema keywords tools and structured
    outputs use: type, properties/required, items/minItems, enum, const, anyOf/oneOf,
    minimum/maximum, minLength; `$ref` into `$defs` is not followed: an object stands in)."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance_of(schema[key][0], rng, depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: instance_of(sub, rng, depth + 1) for name, sub in properties.items() if depth < 6}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1) if depth < 6 else 0
        return [instance_of(schema.get("items") or {}, rng, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        high = schema.get("maximum", low + 100)
        value = rng.randint(int(low), int(high))
        return value if kind == "integer" else float(value)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    words = max(1, -(-int(schema.get("minLength", 1)) // 5))
    return " ".join(rng.choice(VOCABULARY) for _ in range(words))
