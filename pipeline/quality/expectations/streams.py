"""Suites for how the replay read each stream: whether it saw every token the server counted, and
whether the tokens arrived one by one or were buffered and flushed.

**Tokens unseen** (blocking). TPOT divides the stream's time after the first token by the
server's output count (usage); ITL measures the gaps between the chunks the client saw. They
agree, after batching (a server may put several tokens in one chunk: the text of each chunk then
holds several), unless the server counted tokens the client never saw — a kind of delta the
reader does not know (inference-perf#559, aiperf#804: reasoning or tool-call pieces dropped). Per
request, `unseen_token_factor` = the tokens TPOT divides by / the tokens of the text the client
received (its own count, at least one per chunk): 1 when every token was seen, 3 when two in
three were missed. Reasoning that usage reports but the stream never carries (a model that hides
it) is taken out first: those tokens were spent before the first chunk, inside TTFT.
The bound is `UNSEEN_FACTOR_LIMIT` for at least `UNSEEN_MOSTLY` of the requests: the client's
count is loadproof-approx's (words and marks) unless the plan names a real tokenizer, and a BPE
tokenizer can count up to ~1.5× that on English text, so only a factor beyond 2 is a miss. A reply
to a JSON-schema (or JSON-object) request is not judged: a grammar-constrained JSON answer is keys,
quotes and whitespace that loadproof-approx counts far below a BPE tokenizer, and llama.cpp's server
streams it several tokens a chunk (measured: 37 tokens in 16 chunks, counted as 15).

**Zero gaps** (warning). A server that buffers output and flushes it (sglang#36272: a buffering
tool-call parser) shows gaps of ~0 between chunks that took real time to generate: ITL collapses
and TTFO moves to the flush. Per request with at least `ZERO_GAP_MIN_GAPS` gaps whose TPOT is at
least `ZERO_GAP_SLOW_TPOT_MS` (an instant server has zero gaps honestly), `zero_gap_share` = the
share of gaps under `ZERO_GAP_MS`; more than `ZERO_GAP_SHARE_LIMIT` in more than
1 − `ZERO_GAP_MOSTLY` of them is flagged.
"""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa

from pipeline.quality.expectations.runner import with_frame

UNSEEN_FACTOR_LIMIT = 2.0
UNSEEN_MOSTLY = 0.95
ZERO_GAP_MS = 0.1
ZERO_GAP_MIN_GAPS = 4
ZERO_GAP_SLOW_TPOT_MS = 1.0
ZERO_GAP_SHARE_LIMIT = 0.5
ZERO_GAP_MOSTLY = 0.9

UNSEEN_HINT = (
    "the server counted output tokens the replay did not see in the stream (usage.completion_tokens well above "
    "the text received): the endpoint streams a kind of delta the reader does not know, or sends tokens outside "
    "the stream; look at a raw reply (curl -N) and report it — TPOT, ITL and TTFT of this run are not trustworthy"
)
ZERO_GAP_HINT = (
    "the endpoint holds output back and flushes it (many chunks in one write): ITL and TTFO show the flush, not "
    "the generation; check the server's streaming settings (e.g. a tool-call or reasoning parser that buffers)"
)


def _or_zero(value) -> float:
    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA else value


def stream_frame(table: pa.Table | pd.DataFrame) -> pd.DataFrame:
    """One row per request with `unseen_token_factor` and `zero_gap_share` (NULL where not judged:
    module docstring)."""
    frame = table.to_pandas() if isinstance(table, pa.Table) else table.copy()
    factors, shares = [], []
    for row in frame.to_dict("records"):
        factors.append(_unseen_factor(row))
        shares.append(_zero_gap_share(row))
    keep = [c for c in ("candidate", "request_id") if c in frame.columns]
    out = frame[keep].copy()
    out["unseen_token_factor"] = pd.Series(factors, index=frame.index, dtype="Float64")
    out["zero_gap_share"] = pd.Series(shares, index=frame.index, dtype="Float64")
    return out


def _unseen_factor(row: dict) -> float | None:
    if row.get("status") != "ok" or row.get("output_tokens_source") != "usage":
        return None
    if row.get("structured_output_valid") is not None:  # a JSON answer: no yardstick (module docstring)
        return None
    counted = _or_zero(row.get("output_tokens"))
    if _or_zero(row.get("reasoning_chunks")) == 0 and row.get("reasoning_tokens_source") == "usage":
        counted -= _or_zero(row.get("reasoning_tokens"))  # hidden reasoning: inside TTFT
    seen = max(_or_zero(row.get("output_tokens_client")), _or_zero(row.get("content_chunks")))
    if seen < 2 or counted < 2:
        return None
    return counted / seen


def _zero_gap_share(row: dict) -> float | None:
    gaps = row.get("itl_ms")
    if row.get("status") != "ok" or gaps is None or len(gaps) < ZERO_GAP_MIN_GAPS:
        return None
    if _or_zero(row.get("tpot_ms")) < ZERO_GAP_SLOW_TPOT_MS:
        return None
    return sum(1 for gap in gaps if gap < ZERO_GAP_MS) / len(gaps)


def _at_most(gx, column: str, limit: float, mostly: float, hint: str) -> list:
    return [
        gx.expectations.ExpectColumnValuesToBeBetween(
            column=column, max_value=limit, mostly=mostly, meta={"hint": hint}
        )
    ]


@with_frame(stream_frame)
def stream_tokens_seen_suite(gx, params: dict) -> list:
    """The client saw the tokens the server counted (module docstring)."""
    return _at_most(gx, "unseen_token_factor", UNSEEN_FACTOR_LIMIT, UNSEEN_MOSTLY, UNSEEN_HINT)


@with_frame(stream_frame)
def stream_gaps_suite(gx, params: dict) -> list:
    """Tokens arrived one by one, not buffered and flushed (module docstring)."""
    return _at_most(gx, "zero_gap_share", ZERO_GAP_SHARE_LIMIT, ZERO_GAP_MOSTLY, ZERO_GAP_HINT)
