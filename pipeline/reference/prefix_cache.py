"""The reference engine's prefix cache: block-hashed prompts and an LRU of computed blocks.

As in vLLM's automatic prefix caching, a prompt is cut into fixed-size token blocks and each full
block is named by a hash chained over every block before it, so a block hash stands for the whole
prefix up to its end: two prompts share block i's hash only if they agree on all tokens up to it.
A sequence whose prefill computes a block registers its hash; a later sequence whose leading
blocks are registered skips their prefill (`EngineCore` starts its `context_prefilled` there).

Modelling choice (why no KV pool): vLLM keeps cached blocks in the free part of its KV cache and
evicts them, least recently used first, when memory is needed. Here the cache is bookkeeping of
which prefixes were computed, bounded by a number of blocks (default: as many as the KV cache
holds) and evicted LRU; a hit still charges the sequence its full context in KV, so the engine's
KV accounting, admission and pre-emption rules are the same with or without the cache.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence as Seq

_ROOT = b"\x00" * 8


def block_hashes(tokens: Seq[str], block_tokens: int) -> tuple[int, ...]:
    """Chained hashes of the full `block_tokens`-token blocks of `tokens` (a partial last block
    is never cached). blake2b, not `hash()`: the same prompt hashes the same in every process."""
    out: list[int] = []
    parent = _ROOT
    for start in range(0, len(tokens) - block_tokens + 1, block_tokens):
        digest = hashlib.blake2b(parent, digest_size=8)
        digest.update("\x1f".join(tokens[start : start + block_tokens]).encode())
        parent = digest.digest()
        out.append(int.from_bytes(parent, "big"))
    return tuple(out)


class PrefixCache:
    """An LRU set of block hashes, at most `capacity_blocks` of them (None: unbounded)."""

    def __init__(self, block_tokens: int, capacity_blocks: int | None) -> None:
        self.block_tokens = block_tokens
        self.capacity_blocks = capacity_blocks
        self._blocks: OrderedDict[int, None] = OrderedDict()
        self.queried_tokens = 0  # tokens looked up (vLLM: prefix_cache_queries)
        self.hit_tokens = 0  # of which found cached (vLLM: prefix_cache_hits)

    def __len__(self) -> int:
        return len(self._blocks)

    def lookup(self, hashes: Seq[int], context_tokens: int) -> int:
        """Tokens of a context of `context_tokens` tokens (prompt `hashes`) that are cached: the
        leading run of registered blocks, short of the last token (which must be computed for its
        logits, as vLLM does). Counts the query and refreshes the hit blocks' recency."""
        usable = min(len(hashes), max(context_tokens - 1, 0) // self.block_tokens)
        hits = 0
        while hits < usable and hashes[hits] in self._blocks:
            self._blocks.move_to_end(hashes[hits])
            hits += 1
        cached = hits * self.block_tokens
        self.queried_tokens += context_tokens
        self.hit_tokens += cached
        return cached

    def register(self, hashes: Seq[int]) -> None:
        """Blocks whose KV was just computed: add them (most recent), evicting the least recent."""
        for block in hashes:
            if block in self._blocks:
                self._blocks.move_to_end(block)
            else:
                self._blocks[block] = None
        if self.capacity_blocks is not None:
            while len(self._blocks) > self.capacity_blocks:
                self._blocks.popitem(last=False)
