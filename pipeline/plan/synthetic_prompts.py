"""Prompts for logs that carry lengths but no text (Azure, Mooncake, BurstGPT traces).

A synthetic prompt is fitted to the logged prompt length under a named tokenizer. The one this
project ships is `loadproof-approx` (pipeline/tokens.py: words and punctuation marks, plus one
token per message's role marker) — the tokenizer the reference endpoint reports usage with, so
its usage figures check the fit exactly. It needs no files, hence works offline.

The seam for a real model's tokenizer: any object with `name` and `count_messages(messages)`
(e.g. one loading a local tokenizer.json, or one calling the server's /tokenize endpoint as
vLLM's benchmark does) can be passed to `fit_messages`; the fit searches the number of words
until the count equals the target, and the plan records achieved beside requested.

Mooncake `hash_ids`: each id becomes the same block of `block_tokens` words wherever it occurs,
so requests that shared a prefix in production share it in the replay (the prefix cache sees the
same reuse).
"""

from __future__ import annotations

import random
from typing import Protocol

from pipeline.tokens import count_message_tokens

WORDS = [
    "account",
    "card",
    "transfer",
    "payment",
    "balance",
    "statement",
    "branch",
    "limit",
    "fee",
    "refund",
    "order",
    "delivery",
    "invoice",
    "customer",
    "request",
    "status",
    "update",
    "policy",
    "report",
    "summary",
    "contract",
    "renewal",
    "service",
    "support",
    "ticket",
    "issue",
    "error",
    "network",
    "latency",
    "region",
    "quota",
    "storage",
    "backup",
    "schedule",
    "meeting",
    "travel",
    "booking",
    "flight",
    "hotel",
    "price",
    "offer",
    "discount",
    "return",
    "warranty",
    "product",
    "model",
    "version",
]
PUNCTUATION = (".", ",", "?", ";", ":")


class Tokenizer(Protocol):
    name: str

    def count_messages(self, messages: list[dict]) -> int: ...


class ApproxTokenizer:
    """pipeline/tokens.py: what the reference endpoint counts usage with."""

    name = "loadproof-approx"

    def count_messages(self, messages: list[dict]) -> int:
        return count_message_tokens(messages)


def word_stream(seed: str, length: int) -> list[str]:
    """`length` tokens of pseudo-text: words, with a punctuation mark every few words."""
    rng = random.Random(seed)
    tokens: list[str] = []
    while len(tokens) < length:
        tokens.append(
            rng.choice(PUNCTUATION)
            if tokens and rng.random() < 0.12 and tokens[-1] not in PUNCTUATION
            else rng.choice(WORDS)
        )
    return tokens


def render(tokens: list[str]) -> str:
    """Words separated by spaces; a punctuation mark attached to the word before it."""
    parts: list[str] = []
    for token in tokens:
        if token in PUNCTUATION and parts:
            parts[-1] += token
        else:
            parts.append(token)
    return " ".join(parts)


def prompt_tokens_stream(target: int, seed: str, prefix_hashes: list[int] | None, block_tokens: int) -> list[str]:
    """Enough tokens for `target`: the shared prefix blocks first (one per hash id), then
    tokens of this request's own."""
    tokens: list[str] = []
    for block in prefix_hashes or []:
        if len(tokens) >= target:
            break
        tokens.extend(word_stream(f"block:{block}", block_tokens))
    if len(tokens) < target:
        tokens.extend(word_stream(f"request:{seed}", target - len(tokens)))
    return tokens


def fit_messages(
    target_tokens: int,
    seed: str,
    tokenizer: Tokenizer,
    prefix_hashes: list[int] | None = None,
    block_tokens: int = 512,
) -> tuple[list[dict], int]:
    """A one-message chat whose count under `tokenizer` is `target_tokens` where it can be;
    returns the messages and the count achieved (the nearest from below otherwise)."""
    stream = prompt_tokens_stream(2 * target_tokens + 8, seed, prefix_hashes, block_tokens)

    def count(n: int) -> int:
        return tokenizer.count_messages([{"role": "user", "content": render(stream[:n])}])

    guess = max(0, min(len(stream), target_tokens - count(0)))
    if count(guess) != target_tokens:
        low, high = 0, len(stream)  # largest n whose count does not pass the target
        while low < high:
            middle = (low + high + 1) // 2
            if count(middle) <= target_tokens:
                low = middle
            else:
                high = middle - 1
        guess = low
    messages = [{"role": "user", "content": render(stream[:guess])}]
    return messages, tokenizer.count_messages(messages)
