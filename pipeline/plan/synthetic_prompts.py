"""Prompts for logs that carry lengths but no text (Azure, Mooncake, BurstGPT traces).

A synthetic prompt is fitted to the logged prompt length under the tokenizer the spec names
(`workload.prompts.tokenizer`; pipeline/tokens/tokenizers.py): `loadproof-approx` by default — the
reference endpoint's own count, so its usage checks the fit exactly — or the model's own (a local
tokenizer.json, a GGUF's vocabulary, the server's tokenize endpoint), so a real model sees the
logged length too.

"Requested length" is the logged prompt length, which in a production log is the server's
`usage.prompt_tokens`: the chat template's tokens included. A real tokenizer's chat count is its
content count plus the template's overhead (measured once per server, or given in the spec), so
the fit chooses the content's length such that content + template = the logged length. The fit
searches the number of words (a secant step from a one-token-per-word guess, then bisection)
until the count equals the target, tops up a short fit with punctuation marks, and the plan
records achieved beside requested.

Mooncake `hash_ids`: each id becomes the same block of `block_tokens` words wherever it occurs,
so requests that shared a prefix in production share it in the replay (the prefix cache sees the
same reuse; under a real tokenizer a block is the same text, if not exactly `block_tokens` long).
"""

from __future__ import annotations

import random

from pipeline.tokens.tokenizers import ApproxTokenizer, Tokenizer

__all__ = ["ApproxTokenizer", "Tokenizer", "fit_messages", "prompt_tokens_stream", "render", "word_stream"]

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


SECANT_STEPS = 3


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
    counts: dict[int, int] = {}

    def count(n: int) -> int:
        if n not in counts:
            counts[n] = tokenizer.count_messages([{"role": "user", "content": render(stream[:n])}])
        return counts[n]

    base = count(0)
    guess = max(0, min(len(stream), target_tokens - base))
    for _ in range(SECANT_STEPS):  # words per token is near-constant: a secant step lands close
        achieved = count(guess)
        if achieved in (target_tokens, base):
            break
        guess = max(0, min(len(stream), round(guess * (target_tokens - base) / (achieved - base))))
    if count(guess) != target_tokens:
        fits = [n for n, c in counts.items() if c <= target_tokens]
        over = [n for n, c in counts.items() if c > target_tokens]
        low, high = max(fits, default=0), min(over, default=len(stream) + 1) - 1
        while low < high:  # the largest n whose count does not pass the target
            middle = (low + high + 1) // 2
            if count(middle) <= target_tokens:
                low = middle
            else:
                high = middle - 1
        guess = low
    text = render(stream[:guess])
    messages = [{"role": "user", "content": text}]
    achieved = count(guess)
    for mark in PUNCTUATION if achieved < target_tokens else ():  # a word too long for the gap: top up
        topped = [{"role": "user", "content": f"{text}{mark}" if text else mark}]
        if achieved < (topped_count := tokenizer.count_messages(topped)) <= target_tokens:
            messages, achieved, text = topped, topped_count, topped[0]["content"]
        if achieved == target_tokens:
            break
    return messages, achieved
