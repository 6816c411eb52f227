"""Session replay: each session's turns in order, each after the previous reply plus the think
time, carrying the conversation so far (the plan side is pipeline/plan/sessions.py).

The open and closed loops of engine.py see only the *leads* — session-less requests and the
first turn of each chain — and call `wrap(fire)` for each. For a chain's first turn the wrapper
sends it, then each later turn in turn:

- scheduled at the previous turn's end (its `t_end_ns`, after any retries) + `think_time_s`;
  its schedule lag is measured against that instant, and its `scheduled_offset_s` is that
  instant's offset from the replay's start (the same origin as the planned offsets);
- its messages are the exchanges so far — every message sent before and each reply actually
  received, as an `assistant` message — followed by the turn's own new messages;
- sent through the same `fire` as every request: the concurrency cap, the retries and the
  `max_duration_s` bound apply; a turn whose instant falls past the bound is recorded
  `not_sent`, and so is every turn after it.

Sessions run concurrently with one another and with the session-less requests (in the open loop
each chain is one task; in the closed loop a worker runs a whole chain, think times included).

A turn whose predecessor failed is still sent, at the failure's end + its think time: dropping the
rest of a session would take load off an endpoint exactly when it fails (coordinated omission).
The failed exchange is left out of the conversation — its user message too, so that roles keep
alternating (chat templates such as Gemma's refuse two user messages in a row) — and the record's
`session_history_turns` says how many earlier exchanges the turn actually carried (when the
chain's first turn failed, the second goes with its own messages only).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from pipeline.replay.pacing.pacer import DeadlinePacer
from pipeline.replay.recording.records import PlannedRequest, RequestOutcome
from pipeline.tokens import count_message_tokens

Fire = Callable[[PlannedRequest, int, float | None], Awaitable[RequestOutcome]]
SESSION_COLUMNS = ("session_id", "session_turn", "follows_request_id", "think_time_s")


class SessionChains:
    """The plan split into leads (what the loops pace) and the turns that follow each request."""

    def __init__(self, plan: list[PlannedRequest], deadline_ns: int):
        planned = {item.request_id for item in plan}
        self.deadline_ns = deadline_ns
        self.next_turn: dict[str, PlannedRequest] = {}
        leads = []
        for item in plan:
            # a turn whose predecessor is not in this plan (e.g. calibration's stretch) leads
            if item.follows_request_id is not None and item.follows_request_id in planned:
                self.next_turn[item.follows_request_id] = item
            else:
                leads.append(item)
        self.leads = leads if self.next_turn else plan
        self.unsent: list[tuple[PlannedRequest, float | None]] = []

    def wrap(self, fire: Fire, origin_ns: int) -> Fire:
        """`fire` itself for a plan without sessions; else a fire that runs a lead's whole chain.
        `origin_ns`: the instant of offset 0 (the loops' own)."""
        if not self.next_turn:
            return fire

        async def fire_chain(item: PlannedRequest, t_scheduled_ns: int, offset_s: float | None) -> RequestOutcome:
            conversation: list[dict] = []  # the exchanges that succeeded so far
            exchanges, pacer = 0, None
            try:
                while True:
                    sent = _with_history(item, conversation, exchanges)
                    outcome = await fire(sent, t_scheduled_ns, offset_s)
                    if outcome.error_type is None:
                        conversation = [*sent.messages, {"role": "assistant", "content": outcome.reply_text or ""}]
                        exchanges += 1
                    following = self.next_turn.get(item.request_id)
                    if following is None:
                        return outcome
                    t_scheduled_ns = outcome.t_end_ns + round((following.think_time_s or 0.0) * 1e9)
                    offset_s = (t_scheduled_ns - origin_ns) / 1e9
                    if t_scheduled_ns >= self.deadline_ns:
                        self._not_sent_from(following, offset_s)
                        return outcome
                    pacer = pacer or DeadlinePacer()  # one timer per waiting chain
                    await pacer.sleep_until(t_scheduled_ns)
                    item = following
            finally:
                if pacer is not None:
                    pacer.close()

        return fire_chain

    def _not_sent_from(self, turn: PlannedRequest | None, offset_s: float | None) -> None:
        """This turn (due at `offset_s`) and every later one of its chain."""
        while turn is not None:
            self.unsent.append((turn, offset_s))
            turn, offset_s = self.next_turn.get(turn.request_id), None

    def with_unsent_turns(self, unsent: list[tuple[PlannedRequest, float | None]]) -> list:
        """The loops' unsent leads, the later turns of those leads' chains, and the turns the
        chains could not send before the bound."""
        for lead, _offset in list(unsent):
            following = self.next_turn.get(lead.request_id)
            if following is not None:
                self._not_sent_from(following, None)
        return [*unsent, *self.unsent]


def _with_history(item: PlannedRequest, conversation: list[dict], exchanges: int) -> PlannedRequest:
    if item.session_id is None:
        return item
    if not conversation:
        return replace(item, history_turns=0)
    messages = [*conversation, *item.messages]
    return replace(
        item, messages=messages, prompt_tokens_client=count_message_tokens(messages), history_turns=exchanges
    )


def add_record_columns(record: dict, item: PlannedRequest) -> None:
    """The session columns of a raw-timings record (left out, hence NULL, without a session)."""
    if item.session_id is None:
        return
    for name in SESSION_COLUMNS:
        record[name] = getattr(item, name)
    record["session_history_turns"] = item.history_turns
