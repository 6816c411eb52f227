"""The tokenizers a spec can name in `workload.prompts.tokenizer`, behind one small interface.

Why more than `loadproof-approx`: a synthetic prompt fitted under the approximate count is only
as long as the reference endpoint says; against a real model the lengths drift, and every latency
and throughput figure rests on them. So the plan fits prompts under the model's own tokenizer:

- `loadproof-approx` (default): pipeline/tokens — the reference endpoint's own count, no files;
- `hf:PATH`: a local `tokenizer.json` (or a folder holding one), read with Hugging Face's
  `tokenizers` library — never the hub;
- `gguf:PATH`: the tokenizer inside a GGUF, through llama.cpp's vocab-only load (the `model`
  extra's llama-cpp-python; no weights are read);
- `server` / `server:CANDIDATE`: a candidate's own tokenize endpoint (the first candidate's, or the
  named one's; pipeline/tokens/server_tokenize.py).

A setting is resolved once (`resolve_setting`: a relative path against the spec's folder) and the
resolved string is what the plan records in its `tokenizer` column, so the replay — in any shard's
process — loads the same tokenizer (`load_tokenizer`) to count replies that come without usage.

The chat template: the server counts the template's tokens (BOS, turn markers) in
`usage.prompt_tokens`, and a length-only log records that count. A real tokenizer counts text, so
the plan fits under `Templated`: the content's tokens plus the template's overhead around a
one-message chat — measured once per server (server_tokenize.measure_template_tokens) or given in
the spec (`workload.prompts.template_tokens`).
"""

from __future__ import annotations

import atexit
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from pipeline.tokens import count_message_tokens, count_tokens

SPEC_FIELD = "workload.prompts.tokenizer"
APPROX = "loadproof-approx"
KINDS = ("hf", "gguf", "server")


class TokenizerError(ValueError):
    """A tokenizer the spec names that cannot be used; the message names the spec field."""


class Tokenizer(Protocol):
    """What fitting a prompt and counting a reply need: a name, a chat count and a text count."""

    name: str

    def count_messages(self, messages: list[dict]) -> int: ...

    def count_text(self, text: str) -> int: ...


def content_text(messages: list[dict]) -> list[str]:
    """Each message's text (OpenAI content parts joined), in order."""
    texts = []
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        texts.append(str(content))
    return texts


class ApproxTokenizer:
    """pipeline/tokens: what the reference endpoint counts usage with (one token per role marker)."""

    name = APPROX
    setting = APPROX
    exact_text = False  # an approximation of any real model's count: never a reply's count of record

    def count_messages(self, messages: list[dict]) -> int:
        return count_message_tokens(messages)

    def count_text(self, text: str) -> int:
        return count_tokens(text)


class TextTokenizer:
    """A real tokenizer over text; a chat is its contents' tokens (the template's own tokens are
    added by `Templated`)."""

    name: str
    setting: str
    exact_text = True

    def encode(self, text: str) -> int:
        raise NotImplementedError

    def count_text(self, text: str) -> int:
        return self.encode(text)

    def count_messages(self, messages: list[dict]) -> int:
        return sum(self.encode(text) for text in content_text(messages))


class Templated:
    """A text tokenizer's chat count plus the chat template's overhead around a one-message chat
    (what the server adds: BOS, turn markers), so a fitted prompt's count is the server's."""

    def __init__(self, tokenizer: Tokenizer, template_tokens: int) -> None:
        self.tokenizer, self.template_tokens = tokenizer, template_tokens
        self.name = tokenizer.name
        self.setting: str = getattr(tokenizer, "setting", tokenizer.name)

    def count_text(self, text: str) -> int:
        return self.tokenizer.count_text(text)

    def count_messages(self, messages: list[dict]) -> int:
        return self.tokenizer.count_messages(messages) + self.template_tokens


class HfTokenizer(TextTokenizer):
    """A local tokenizer.json through `tokenizers`, without special tokens (the template's are
    counted in `template_tokens`) and without the file's truncation and padding: many files (BERT's
    family) set both to the model's input size, and a count under them is that size for every text
    (a reply of 500 tokens "counted" 128, a 10-token one padded to 128), so every fitted prompt and
    every client-side reply count would be wrong."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer as HfModel

        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise TokenizerError(f"{SPEC_FIELD}: hf:{path}: no tokenizer.json there")
        try:
            self._model = HfModel.from_file(str(file))
        except Exception as exc:  # the Rust side raises its own Exception subclass
            raise TokenizerError(f"{SPEC_FIELD}: hf:{path}: not a tokenizer.json ({exc})") from exc
        self._model.no_truncation()  # counting, not feeding a model: every token of the text counts
        self._model.no_padding()
        self.name, self.setting = f"hf:{path.name}", f"hf:{path}"

    def encode(self, text: str) -> int:
        return len(self._model.encode(text, add_special_tokens=False).ids)


class GgufTokenizer(TextTokenizer):
    """The vocabulary of a GGUF through llama.cpp's vocab-only load (no weights read)."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise TokenizerError(f"{SPEC_FIELD}: gguf:{path}: no such file")
        if importlib.util.find_spec("llama_cpp") is None:
            raise TokenizerError(
                f"{SPEC_FIELD}: gguf:{path} needs llama-cpp-python, the `model` extra "
                "(`make real-model`, or pip install -e '.[model]')"
            )
        import llama_cpp

        try:
            self._model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        except ValueError as exc:  # llama-cpp-python's word for a file it cannot load
            raise TokenizerError(f"{SPEC_FIELD}: gguf:{path}: llama.cpp cannot read it ({exc})") from exc
        # closed before the interpreter tears llama_cpp down: a cached vocabulary freed in __del__
        # at exit finds the library's functions gone ("Exception ignored in Llama.__del__")
        atexit.register(self._model.close)
        self.name, self.setting = f"gguf:{path.name}", f"gguf:{path}"

    def encode(self, text: str) -> int:
        return len(self._model.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def resolve_setting(setting: str, resolve_path, server_root: str | None = None) -> str:
    """The setting with a path made absolute (`resolve_path`: the spec's own rule, relative to its
    folder) or `server` bound to the URL of the server it names; checked for existence here so the
    error names the spec field before anything runs."""
    if setting == APPROX:
        return setting
    kind, _, rest = setting.partition(":")
    if kind in ("hf", "gguf"):
        path = Path(resolve_path(rest))
        if not path.exists():
            raise TokenizerError(f"{SPEC_FIELD}: {setting}: {path} does not exist")
        return f"{kind}:{path}"
    if kind == "server":
        if not server_root:
            raise TokenizerError(f"{SPEC_FIELD}: {setting}: no candidate to ask")
        return f"server:{server_root.rstrip('/')}"
    raise TokenizerError(f"{SPEC_FIELD}: {setting!r} is none of loadproof-approx, hf:PATH, gguf:PATH, server")


@lru_cache(maxsize=8)
def load_tokenizer(setting: str, headers: tuple[tuple[str, str], ...] = ()) -> Tokenizer:
    """The tokenizer of a resolved setting, loaded once per process (a GGUF vocabulary takes a
    second). `headers` reach a server's tokenize endpoint (its API key)."""
    if setting == APPROX:
        return ApproxTokenizer()
    kind, _, rest = setting.partition(":")
    if kind == "hf":
        return HfTokenizer(Path(rest))
    if kind == "gguf":
        return GgufTokenizer(Path(rest))
    if kind == "server":
        from pipeline.tokens.server_tokenize import ServerTokenizer

        return ServerTokenizer(rest, dict(headers))
    raise TokenizerError(f"{SPEC_FIELD}: {setting!r} is none of loadproof-approx, hf:PATH, gguf:PATH, server")


def reply_counter(setting: str | None) -> Tokenizer | None:
    """The tokenizer a reply without usage is counted with: a real one loaded in this process
    (hf, gguf); None for the approximate count and for a server's endpoint (no HTTP call in the
    replay's hot path), whose replies fall back to the content-chunk count."""
    if not setting or setting == APPROX or setting.startswith("server:"):
        return None
    return load_tokenizer(setting)
