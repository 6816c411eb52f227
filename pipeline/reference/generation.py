"""What the reference endpoint says: deterministic words, one token each.

The server asks a *writer* for the reply of every request: a callable taking a
`GenerationRequest` and returning a `Reply` (the content pieces, one token each, and the finish
reason). `default_writer` writes seeded words, like vLLM's `ignore_eos` (exactly `max_tokens`
of them unless a stop string cuts them short). Another writer — an accuracy oracle answering
labelled prompts, say — can wrap it: `build_app(profile, writer=my_writer)`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pipeline.reference.serving_profile import ServingProfile

VOCABULARY = (
    "alpha", "bravo", "cargo", "delta", "ember", "falcon", "garnet", "harbor",
    "island", "jasper", "kettle", "lumen", "maple", "nectar", "orbit", "pebble",
    "quartz", "river", "saffron", "timber", "umber", "velvet", "willow", "xenon",
    "yonder", "zephyr", "atlas", "beacon", "cobalt", "dune", "echo", "fable",
)  # fmt: skip

_PIECE = re.compile(r"\s*(?:\w+|[^\w\s])")  # one token of pipeline.tokens.count_tokens each


@dataclass(frozen=True)
class GenerationRequest:
    """The parts of a chat or text completion request that decide its content."""

    profile: ServingProfile
    kind: Literal["chat", "completion"]
    messages: list[dict] | None  # chat
    prompt: str | None  # completion
    max_tokens: int
    stop: str | list[str] | None = None
    temperature: float | None = None
    seed: int | None = None

    @property
    def prompt_text(self) -> str:
        """The prompt as one string (chat: the messages' contents, one per line)."""
        if self.prompt is not None:
            return self.prompt
        return "\n".join(str(m.get("content") or "") for m in self.messages or [])


@dataclass(frozen=True)
class Reply:
    pieces: list[str]  # content deltas, one token each
    finish_reason: Literal["stop", "length"]

    @property
    def text(self) -> str:
        return "".join(self.pieces)


Writer = Callable[[GenerationRequest], Reply]


def split_into_pieces(text: str) -> list[str]:
    """Cut text into one-token pieces (leading whitespace kept) for streaming it."""
    return _PIECE.findall(text)


def apply_stop(pieces: list[str], stop: str | list[str] | None) -> Reply:
    """Cut the pieces just before the first stop string (which is not returned)."""
    stops = [s for s in ([stop] if isinstance(stop, str) else stop or []) if s]
    text = "".join(pieces)
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    if cut < 0:
        return Reply(pieces, "length")
    kept: list[str] = []
    used = 0
    for piece in pieces:
        if used >= cut:
            break
        kept.append(piece[: cut - used])
        used += len(piece)
    return Reply(kept, "stop")


def generate_pieces(
    profile: ServingProfile, messages: list[dict], n_tokens: int, stop: str | list[str] | None
) -> tuple[list[str], str]:
    """The seeded words of a chat reply and its finish reason (kept for callers of the old API)."""
    reply = default_writer(GenerationRequest(profile, "chat", messages, None, n_tokens, stop))
    return reply.pieces, reply.finish_reason


def default_writer(request: GenerationRequest) -> Reply:
    """`max_tokens` seeded words. The RNG is seeded with the profile's seed plus a sha256 of the
    prompt; a positive temperature or an explicit `seed` also enter the hash, so the same
    request always gets the same words and a different temperature or seed gets others."""
    key: object = request.messages if request.kind == "chat" else request.prompt
    if (request.temperature or 0) > 0 or request.seed is not None:
        key = {"prompt": key, "temperature": request.temperature, "seed": request.seed}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).digest()
    rng = random.Random(request.profile.seed + int.from_bytes(digest[:8], "big"))
    pieces = [(" " if i else "") + rng.choice(VOCABULARY) for i in range(request.max_tokens)]
    return apply_stop(pieces, request.stop)
