"""Sessions in the replay plan: which sampled turn follows which, how long the user thought,
and what each later turn adds to the conversation.

When the log carries a session (or conversation) id and the spec's `replay.sessions` is `auto`,
a session's turns are chained: the first is sent at its planned offset, each later turn after
the previous turn's reply ended plus the logged think time (pipeline/replay/pacing/sessions.py), with the
conversation so far — the messages sent before and the replies actually received — in front of
its own new messages.

Choices, all written down here so that the plan explains itself:
- Turn order is arrival order within the session, numbered over the whole log
  (sql/session_turns.sql); `session_turn` is that number.
- Think time (logged) = this turn's arrival − the end of the previous turn, where the end is the
  previous arrival + its logged latency when the log has one, else the previous arrival alone (the
  gap then also holds the logged reply's own duration: an upper bound). Never below 0. In trace
  mode it is time-scaled like the offsets (`think_time_s` = logged × `time_scale`); rate and
  concurrency modes wait the logged think time as it is.
- Partial sessions: the sample is a window (or a draw) of single requests, so a session may be
  cut. A sampled turn is chained only to the turn right before it (`session_turn` − 1) when that
  one was sampled too; otherwise it starts a chain of its own and is sent as logged (all its
  logged messages, at its own planned offset). A session cut at the window's end simply ends
  early. So the window's requests are all replayed, none is added, and no turn goes without the
  context it was logged with.
- A later turn's own messages: when its logged messages repeat the previous turn's (the usual
  OpenAI log, one full conversation per request), what follows them — less the logged assistant
  reply, which the reply actually received replaces; otherwise (a log of new messages only) its
  logged messages, less a leading system prompt that the chain already has. Length-only logs get
  a synthetic message fitted to the logged prompt tokens less what the conversation already holds
  (the previous turn's prompt and logged reply), at least one token.
- `prompt_tokens_client` of a later turn is the expected context: the chain's previous expected
  context + the previous logged output + its role marker + this turn's own messages (the replay
  records the count of what it actually sent).
- rate mode: the synthetic arrival process paces the chain starts and the session-less requests;
  a later turn has no planned offset of its own (NULL). concurrency mode: a worker runs a whole
  chain, think times included, like a user at a keyboard.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

ASSISTANT_MARKER_TOKENS = 1  # pipeline/tokens (loadproof-approx): one token per message's role marker


@dataclass(frozen=True)
class TurnLink:
    """How one sampled request sits in its session (all None for a session-less request)."""

    session_id: str | None = None
    session_turn: int | None = None
    follows: int | None = None  # row index of the previous turn in the sample, when chained
    think_time_logged_s: float | None = None

    @property
    def chained(self) -> bool:
        return self.follows is not None


def link_turns(sample: pa.Table, enabled: bool) -> list[TurnLink]:
    """One TurnLink per sample row; no session links when disabled or the sample has no ids."""
    names = sample.schema.names
    if not enabled or "session_id" not in names or "session_turn" not in names:
        return [TurnLink() for _ in range(sample.num_rows)]
    ids = sample.column("session_id").to_pylist()
    turns = sample.column("session_turn").to_pylist()
    thinks = sample.column("think_time_s").to_pylist()
    last_seen: dict[str, tuple[int, int]] = {}  # session id -> (row, turn) of its latest sampled turn
    links = []
    for row, (session_id, turn, think) in enumerate(zip(ids, turns, thinks)):
        if session_id is None or turn is None:
            links.append(TurnLink())
            continue
        previous = last_seen.get(session_id)
        follows = previous[0] if previous is not None and previous[1] == turn - 1 else None
        links.append(TurnLink(session_id, turn, follows, think if follows is not None else None))
        last_seen[session_id] = (row, turn)
    return links


def own_messages(previous_logged: list[dict], logged: list[dict], chain_first: list[dict]) -> list[dict]:
    """What a later turn adds to the conversation (module docstring); never empty."""
    if len(logged) > len(previous_logged) and logged[: len(previous_logged)] == previous_logged:
        added = logged[len(previous_logged) :]
        if len(added) > 1 and added[0].get("role") == "assistant":
            added = added[1:]  # the logged reply: the replay carries the one it received
        return added
    system = _leading_system(chain_first)
    if system and logged[: len(system)] == system and len(logged) > len(system):
        return logged[len(system) :]
    return logged


def _leading_system(messages: list[dict]) -> list[dict]:
    leading = []
    for message in messages:
        if message.get("role") != "system":
            break
        leading.append(message)
    return leading


def synthetic_target(logged_prompt_tokens: int, previous_expected: int, previous_output: int) -> int:
    """Tokens of a length-only later turn's own message: the logged prompt less the context the
    conversation already holds, at least 1."""
    return max(1, logged_prompt_tokens - expected_context(previous_expected, previous_output, 0))


def expected_context(previous_expected: int, previous_output: int, own_tokens: int) -> int:
    """The prompt a later turn sends when the previous reply has its logged length."""
    return previous_expected + previous_output + ASSISTANT_MARKER_TOKENS + own_tokens


def lead_rows(links: list[TurnLink]) -> list[bool]:
    """True for the requests an arrival process paces: chain starts and session-less requests."""
    return [not link.chained for link in links]


def parse_messages(messages_json: str | None) -> list[dict] | None:
    return json.loads(messages_json) if messages_json else None


def session_summary(plan: pa.Table) -> dict:
    """Sessions in a replay plan (for its metadata): how many, how many turns are chained to the
    one before, and how many chains start mid-session (a window or draw cut the session)."""
    rows = plan.select(["session_id", "session_turn", "follows_request_id"]).to_pylist()
    in_sessions = [row for row in rows if row["session_id"] is not None]
    return {
        "sessions": len({row["session_id"] for row in in_sessions}),
        "session_requests": len(in_sessions),
        "chained_turns": sum(row["follows_request_id"] is not None for row in in_sessions),
        "chains_started_mid_session": sum(
            row["follows_request_id"] is None and (row["session_turn"] or 1) > 1 for row in in_sessions
        ),
    }
