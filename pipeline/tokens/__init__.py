"""One approximate tokenizer shared by the reference endpoint and the client-side counts.

Real endpoints report their own token counts; the client count exists to detect disagreement,
so it only needs to be cheap and stable: words and single punctuation marks are one token each.
A model's own tokenizer, where the spec names one, is in `tokenizers.py` (a local tokenizer.json
or GGUF) and `server_tokenize.py` (the server's endpoint); importing this package loads neither.
"""

import re

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _content_text(message: dict) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # OpenAI content parts
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def count_message_tokens(messages: list[dict]) -> int:
    """Prompt tokens of a chat request: the content of every message plus one per role marker."""
    return sum(count_tokens(_content_text(message)) + 1 for message in messages)


def tokenize(text: str) -> list[str]:
    """The tokens `count_tokens` counts, in order (what a prefix cache hashes in blocks)."""
    return _TOKEN.findall(text)


def message_tokens(messages: list[dict]) -> list[str]:
    """The tokens `count_message_tokens` counts, in order: each message's role marker, then its
    content's tokens — so two chats sharing their first messages share a token prefix."""
    tokens: list[str] = []
    for message in messages:
        tokens.append(f"<|{message.get('role', '')}|>")
        tokens.extend(tokenize(_content_text(message)))
    return tokens
