"""One approximate tokenizer shared by the reference endpoint and the client-side counts.

Real endpoints report their own token counts; the client count exists to detect disagreement,
so it only needs to be cheap and stable: words and single punctuation marks are one token each.
"""

import re

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def count_message_tokens(messages: list[dict]) -> int:
    """Prompt tokens of a chat request: the content of every message plus one per role marker."""
    total = 0
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):  # OpenAI content parts
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        total += count_tokens(str(content)) + 1
    return total
