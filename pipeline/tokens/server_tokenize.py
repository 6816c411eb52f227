"""A candidate's own tokenize endpoint as a tokenizer, and the chat template's overhead it adds.

Self-hosted servers expose their tokenizer at the server root (not under /v1), each in its own
shape; the first that answers a probe with tokens is used, and its name says which:

| dialect | request | reply |
|---|---|---|
| `vllm` | `POST /tokenize {"model", "prompt", "add_special_tokens": false}` | `{"count", "tokens"}` |
| `llama.cpp` | `POST /tokenize {"content", "add_special": false}` | `{"tokens": [...]}` |
| `tgi` | `POST /tokenize {"inputs"}` | `[{"id", "text", ...}, ...]` |
| `llama-cpp-python` | `POST /extras/tokenize {"input", "model"}` | `{"tokens": [...]}` (BOS included) |

llama.cpp's server answers a body without `content` with no tokens and HTTP 200, so a dialect
counts only when the probe text comes back as at least one token.

The template overhead (`measure_template_tokens`) is what the server's usage adds to the text
count for a one-message chat: one non-streamed completion of one token, read once per plan.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from pipeline.http_retry import retrying_client
from pipeline.tokens.tokenizers import SPEC_FIELD, TextTokenizer, Tokenizer, TokenizerError

TIMEOUT_S = 30.0
PROBE_TEXT = "account card transfer, payment balance."
TEMPLATE_FIELD = "workload.prompts.template_tokens"


def _token_list(reply) -> list | None:
    if isinstance(reply, dict) and isinstance(reply.get("tokens"), list):
        return reply["tokens"]
    if isinstance(reply, list):  # TGI: one object per token
        return reply
    return None


# (dialect, path, request body for a text and a model name)
DIALECTS: tuple[tuple[str, str, Callable[[str, str | None], dict]], ...] = (
    ("vllm", "/tokenize", lambda text, model: {"model": model, "prompt": text, "add_special_tokens": False}),
    ("llama.cpp", "/tokenize", lambda text, model: {"content": text, "add_special": False}),
    ("tgi", "/tokenize", lambda text, model: {"inputs": text}),
    ("llama-cpp-python", "/extras/tokenize", lambda text, model: {"input": text, "model": model}),
)


def server_root(base_url: str) -> str:
    """A candidate's OpenAI base URL (…/v1) without its version path: where /tokenize lives."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class ServerTokenizer(TextTokenizer):
    """Counts through the server's tokenize endpoint (one HTTP call per count: for planning, never
    inside the replay)."""

    def __init__(self, root: str, headers: dict | None = None, model: str | None = None) -> None:
        self.root, self.model = root.rstrip("/"), model
        # a 429, a 5xx or a reset is retried with backoff (pipeline/http_retry.py)
        self._client = retrying_client(TIMEOUT_S, headers=headers or {})
        self.dialect, self._path, self._body = self._probe()
        self.name, self.setting = f"server:{self.dialect}", f"server:{self.root}"

    def _probe(self):
        tried = []
        for dialect, path, body in DIALECTS:
            try:
                response = self._client.post(self.root + path, json=body(PROBE_TEXT, self.model))
            except httpx.HTTPError as exc:
                raise TokenizerError(f"{SPEC_FIELD}: server: {self.root} cannot be reached ({exc!r})") from exc
            tokens = _token_list(response.json()) if response.status_code == 200 and _is_json(response) else None
            if tokens:
                return dialect, path, body
            tried.append(f"{path} as {dialect}: HTTP {response.status_code}")
        raise TokenizerError(
            f"{SPEC_FIELD}: server: {self.root} has no tokenize endpoint loadproof knows ({'; '.join(tried)}); "
            "name a local tokenizer instead (hf:PATH, gguf:PATH)"
        )

    def encode(self, text: str) -> int:
        response = self._client.post(self.root + self._path, json=self._body(text, self.model))
        tokens = _token_list(response.json()) if response.status_code == 200 else None
        if tokens is None:
            raise TokenizerError(f"{SPEC_FIELD}: server ({self.dialect}) answered HTTP {response.status_code}")
        return len(tokens)


def _is_json(response: httpx.Response) -> bool:
    try:
        response.json()
    except ValueError:
        return False
    return True


def measure_template_tokens(
    tokenizer: Tokenizer, chat_url: str, model: str, headers: dict | None = None, text: str = PROBE_TEXT
) -> int:
    """The tokens a server's chat template adds around one user message: its non-streamed
    `usage.prompt_tokens` for that chat minus the tokenizer's count of the text alone."""
    body = {"model": model, "messages": [{"role": "user", "content": text}], "max_tokens": 1, "stream": False}
    try:
        with retrying_client(TIMEOUT_S * 4) as client:  # a 429, a 5xx or a reset is retried
            response = client.post(chat_url, json=body, headers=headers or {})
    except httpx.HTTPError as exc:
        raise TokenizerError(f"{TEMPLATE_FIELD}: the template probe to {chat_url} failed ({exc!r}); set it") from exc
    usage = response.json().get("usage") if response.status_code == 200 and _is_json(response) else None
    prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if not isinstance(prompt_tokens, int):
        raise TokenizerError(
            f"{TEMPLATE_FIELD}: {chat_url} (HTTP {response.status_code}) reported no usage.prompt_tokens to measure "
            "the chat template's overhead by; set it in the spec"
        )
    return prompt_tokens - tokenizer.count_text(text)
