"""Faults on demand: chosen per request by the `x-reference-fault` header or, failing that, at
random with the profile's `faults.rates` (a RNG seeded with the profile's seed, drawn once per
request in arrival order, so the same load gets the same faults).

| fault | what the server does | what the replay records (`error_type`) |
|---|---|---|
| `5xx` | 500, OpenAI error body | `http_5xx` |
| `429` | 429 with `Retry-After`, OpenAI error body | `http_429` (+ `retry_after_s`) |
| `reset` | TCP reset before any response byte | `connection_reset` |
| `stall` | headers and the role chunk, then silence for `faults.stall_s` | `total_timeout` |
| `cut` | half the tokens, then a TCP reset mid-stream | `stream_cut` |
| `malformed` | half the tokens, then an SSE event that is not JSON | `malformed_sse` |
| `wrong_usage` | usage with completion_tokens off by +7 | ok, `usage_issue = usage_mismatch` |
| `no_usage` | no usage chunk although `include_usage` was asked | ok, `usage_issue = usage_missing` |
| `model_not_found` | 404 `model_not_found` whatever the model | `model_not_found` |
| `bad_tool_args` | a tool call's arguments lose their first property (schema-invalid) | ok; `tool_call_valid` false |
| `buffered` | answer / tool-call pieces held to the last token, then sent at once | ok; ITL gaps ~0 (warned) |
| `overbill` | usage.prompt_tokens inflated by `faults.overbill_fraction` (rounded up) | ok; the bill check flags it |
"""

from __future__ import annotations

import math
import random
import socket
import struct

from starlette.types import Scope, Send

from pipeline.reference.serving_profile import FAULT_KINDS, ServingProfile

FAULT_HEADER = "x-reference-fault"
ABORT_KEY = "loadproof.abort"  # scope key: a callable that resets the client's TCP connection
WRONG_USAGE_OFFSET = 7


def billed_prompt_tokens(prompt_tokens: int, fault: str | None, overbill_fraction: float) -> int:
    """The prompt tokens usage reports: the count, or under `overbill` the count inflated (rounded up)."""
    if fault != "overbill":
        return prompt_tokens
    return math.ceil(round(prompt_tokens * (1 + overbill_fraction), 6))  # round first: 100 × 1.1 is 110.000…01


class UnknownFault(ValueError):
    pass


class FaultPicker:
    """Decides the fault of each request (None: behave)."""

    def __init__(self, profile: ServingProfile) -> None:
        self.rates = [(kind, rate) for kind, rate in profile.faults.rates.items() if rate > 0]
        self._rng = random.Random(profile.seed)

    def pick(self, header_value: str | None) -> str | None:
        if header_value:
            value = header_value.strip().lower()
            if value not in FAULT_KINDS:
                raise UnknownFault(f"unknown fault {header_value!r}; known: {', '.join(FAULT_KINDS)}")
            return value
        if not self.rates:
            return None
        draw, acc = self._rng.random(), 0.0
        for kind, rate in self.rates:
            acc += rate
            if draw < acc:
                return kind
        return None


def abort_connection(scope: Scope) -> None:
    """Reset the client's TCP connection now (RST, no FIN), if the server gave us a way to."""
    abort = scope.get(ABORT_KEY)
    if abort is None:
        raise ConnectionAbortedError("reference fault: connection reset")
    abort()


def transport_aborter(send: Send):
    """A callable that resets the connection behind `send`, when the server is uvicorn (whose
    `send` is a bound method of a cycle object holding the asyncio transport); else None."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        return None
    return lambda: _reset(transport)


def _reset(transport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:  # linger 0: close() sends RST instead of FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()
