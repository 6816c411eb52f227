"""The OpenAI API a candidate is measured on (`api` in the spec: `chat`, `completions` or
`responses`): where a request goes, its body, and which reader reads its stream. Every kind
records the same raw-timing columns through the one record path (`reply_reading.ReplyReader`).

- `chat` (the default): `POST /chat/completions`, `reply_reading.chat_body`.
- `completions` (legacy; `vllm bench serve`'s default): `POST /completions` with
  `{model, prompt, max_tokens, stream, stream_options: {include_usage}}`. The planned chat
  messages become one prompt string, `completion_prompt`: a single message is its content alone
  (a `vllm bench serve` prompt, the vendor's arm's, stays exactly its length); more are each
  written `role: content`, joined by a blank line (content parts: their text joined by spaces).
  No chat template is applied — a real server applies none on this API — so the server's prompt
  tokens are the text's alone. Chat-only fields (`CHAT_ONLY_FIELDS`: tools, reasoning switches, logprobs' chat
  form, n) are not sent; the rest are (vLLM honours `response_format` on completions too).
- `responses` (OpenAI's Responses API, served by vLLM too): `POST /responses` with
  `{model, input, max_output_tokens, stream}`; the messages become `input` items (a `tool`
  message a `function_call_output`, an assistant's tool calls `function_call` items), `tools`
  are flattened to Responses' function tools (`{type, name, description, parameters, strict}`),
  a named `tool_choice` to `{type: function, name}`, `response_format` to `text.format`
  (`json_schema`: `{type, name, schema, strict}`; `json_object`), `reasoning_effort` to
  `reasoning.effort`; `min_tokens` is not an input there, `ignore_eos` is (vLLM). Chat-only
  fields the Responses API has no place for (`NOT_ON_RESPONSES`) are not sent; the rest are.
  Shapes: openai-python's `types/responses/` (`function_tool_param.py`,
  `response_format_text_json_schema_config_param.py`) and vLLM's `ResponsesRequest`
  (`vllm/entrypoints/openai/responses/protocol.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

from pipeline.replay.reading.reply_reading import (
    REPLAY_OWNED_FIELDS,
    CompletionsReader,
    ReplyReader,
    StreamReader,
    chat_body,
)
from pipeline.replay.reading.responses_reading import ResponsesReader
from pipeline.replay.recording.records import RequestOutcome

ApiKind = Literal["chat", "completions", "responses"]
API_KINDS: tuple[str, ...] = get_args(ApiKind)
API_PATHS: dict[str, str] = {"chat": "/chat/completions", "completions": "/completions", "responses": "/responses"}
READERS: dict[str, type[ReplyReader]] = {
    "chat": StreamReader,
    "completions": CompletionsReader,
    "responses": ResponsesReader,
}
# logged chat fields a text completion has no place for
CHAT_ONLY_FIELDS = frozenset(
    {
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "reasoning_effort",
        "chat_template_kwargs",
        "thinking",
        "logprobs",
        "top_logprobs",
        "n",
    }
)
# logged chat fields the Responses API has no place for (the ones it has are translated)
NOT_ON_RESPONSES = frozenset({"functions", "function_call", "logprobs", "n", "presence_penalty", "frequency_penalty"})
TRANSLATED_ON_RESPONSES = frozenset({"tools", "tool_choice", "response_format", "reasoning_effort"})


def stream_reader(api: str, outcome: RequestOutcome) -> ReplyReader:
    """The reader of `api`'s stream, recording into `outcome`."""
    return READERS[api](outcome)


def _logged(request_fields: dict | None, left_out: frozenset[str]) -> dict:
    return {k: v for k, v in (request_fields or {}).items() if k not in REPLAY_OWNED_FIELDS | left_out}


def _text(content: object) -> str:
    """A message's content as text: a string as it is, content parts' text joined by spaces."""
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def completion_prompt(messages: list[dict]) -> str:
    """The messages as one plain prompt: one message's content as it is; more, `role: content`
    each, joined by a blank line."""
    if len(messages) == 1:
        return _text(messages[0].get("content"))
    return "\n\n".join(f"{message.get('role', 'user')}: {_text(message.get('content'))}" for message in messages)


def completions_body(
    model: str, messages: list[dict], max_tokens: int, min_tokens: int | None = None, request_fields: dict | None = None
) -> dict:
    """Chat's body (`chat_body`: the same output length, usage asked, min_tokens) with the prompt
    in place of the messages, and without the chat-only fields."""
    body = chat_body(model, [], max_tokens, min_tokens, _logged(request_fields, CHAT_ONLY_FIELDS))
    del body["messages"]
    return {**body, "prompt": completion_prompt(messages)}


def responses_input(messages: list[dict]) -> list[dict]:
    """Chat messages as Responses input items."""
    items: list[dict] = []
    for message in messages:
        role = message.get("role", "user")
        if role == "tool":
            output = _text(message.get("content"))
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id", ""), "output": output})
            continue
        text = _text(message.get("content"))
        if text or not message.get("tool_calls"):
            items.append({"role": role, "content": text})
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id", ""),
                    "name": function.get("name", ""),
                    "arguments": function.get("arguments", ""),
                }
            )
    return items


def _responses_tool(tool: dict) -> dict:
    """A chat tool `{type: function, function: {...}}` as a Responses function tool."""
    function = tool.get("function")
    if tool.get("type", "function") != "function" or not isinstance(function, dict):
        return tool
    return {"type": "function", **function}


def _responses_tool_choice(choice: object) -> object:
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def _text_format(response_format: object) -> dict | None:
    """A chat `response_format` as Responses' `text.format`; None for plain text."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema":
        return None
    spec = response_format.get("json_schema") or {}
    text_format = {"type": "json_schema", "name": spec.get("name", "response"), "schema": spec.get("schema") or {}}
    if "strict" in spec:
        text_format["strict"] = spec["strict"]
    return text_format


def responses_body(
    model: str, messages: list[dict], max_tokens: int, min_tokens: int | None = None, request_fields: dict | None = None
) -> dict:
    fields = request_fields or {}
    body: dict = {
        **_logged(fields, NOT_ON_RESPONSES | TRANSLATED_ON_RESPONSES),
        "model": model,
        "input": responses_input(messages),
        "max_output_tokens": max_tokens,
        "stream": True,
    }
    if fields.get("tools"):
        body["tools"] = [_responses_tool(tool) for tool in fields["tools"] if isinstance(tool, dict)]
    if fields.get("tool_choice") is not None:
        body["tool_choice"] = _responses_tool_choice(fields["tool_choice"])
    if (text_format := _text_format(fields.get("response_format"))) is not None:
        body["text"] = {"format": text_format}
    if fields.get("reasoning_effort") is not None:
        body["reasoning"] = {"effort": fields["reasoning_effort"]}
    if min_tokens is not None:
        body["ignore_eos"] = True
    return body


# the streamed request of each API for one planned request (module docstring): each builder takes
# (model, messages, max_tokens, min_tokens, request_fields), as `reply_reading.chat_body` does
REQUEST_BODIES: dict[str, Callable[[str, list[dict], int, int | None, dict | None], dict]] = {
    "chat": chat_body,
    "completions": completions_body,
    "responses": responses_body,
}
