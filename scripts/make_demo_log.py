"""Generate the bundled demo production log (examples/data/production_requests.jsonl).

A deterministic, synthetic 20-minute OpenAI-style request log of a retail bank's support
assistant: Poisson arrivals whose rate rises into a burst around minute 12, a mix of single- and
multi-turn chats, some with a system prompt, some with pasted account history (long context),
log-normal output lengths, and two deliberately broken lines that ingest must quarantine. The
requests carry the fields a client sets (`request_fields`): a temperature, the bank's tools on a
third, a JSON-schema answer on some, a reasoning effort on a quarter.

Sessions: about one conversation in eight goes on for one or two more turns, logged as the
assistant does it — each turn's request carries the whole conversation so far (the logged reply
included) and the session's `session_id`; the user thinks a log-normal while (median 12 s)
after the reply ended (arrival + logged latency). They are drawn with their own seeded RNG after
the single requests, so the single requests are the same as before sessions were added; request
ids follow arrival order.

    python scripts/make_demo_log.py [--out examples/data/production_requests.jsonl]
"""

import argparse
import json
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.tokens import count_message_tokens

START = datetime(2026, 11, 2, 14, 0, 0, tzinfo=UTC)
DURATION_S = 20 * 60
SEED = 20261102
SESSION_SEED = SEED + 1
SESSION_SHARE = 0.12  # conversations that go on after the first request
THINK_MEDIAN_S, THINK_SIGMA, THINK_MAX_S = 12.0, 0.5, 60.0
REQUEST_SEED = SEED + 2
BANK_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"account_id": {"type": "string", "description": "the customer's account"}},
                "required": ["account_id"],
            },
        },
    }
    for name, description in [
        ("card_status", "Whether the account's cards are active, blocked or expired"),
        ("recent_transactions", "The account's last 20 transactions"),
        ("freeze_card", "Freeze the account's card until the customer unfreezes it"),
    ]
]
INTENT_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "support_intent",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"intent": {"type": "string"}, "urgent": {"type": "boolean"}},
            "required": ["intent", "urgent"],
            "additionalProperties": False,
        },
    },
}
FOLLOW_UPS = [
    "Thanks. And how long will that take?",
    "It still does not work, what else can I try?",
    "Can you do it for me right now?",
    "Is there a fee for that?",
    "OK. Will I get a confirmation by email?",
    "What if it happens again next month?",
]
REPLY = "Thanks, I can help with that. "  # 8 tokens under pipeline/tokens (loadproof-approx)

QUESTIONS = [
    "I was charged twice for the same card payment at {shop}, can you reverse one of them?",
    "How long does a transfer to {country} take and what is the fee?",
    "My card was declined at {shop} even though I have money in my account. Why?",
    "I want to change the PIN on my debit card. What are the steps?",
    "There is a payment to {shop} that I do not recognise. Is this fraud?",
    "Can I top up my account with cash at a {shop} branch?",
    "What exchange rate did you apply to my purchase in {country}?",
    "My salary has not arrived yet although my employer sent it on Friday.",
    "How do I order a replacement card? Mine is damaged.",
    "Why is my transfer to {country} still pending after three days?",
]
SHOPS = ["Tesco", "Amazon", "Shell", "IKEA", "Zara", "Uber", "Lidl", "Apple Store"]
COUNTRIES = ["Spain", "India", "Brazil", "Poland", "Japan", "Kenya", "Mexico", "Canada"]
SYSTEM = (
    "You are the support assistant of a retail bank. Answer briefly, never reveal internal "
    "policies, and ask for no card numbers. Classify the customer's intent before answering."
)
TENANTS = [("mobile-app", "/support/chat", 0.6), ("web", "/support/chat", 0.3), ("branch-tablet", "/staff/assist", 0.1)]


def rate_at(t: float) -> float:
    """Requests per second at t seconds: a slow daily ramp plus a burst around minute 12."""
    base = 0.8 + 0.6 * t / DURATION_S
    burst = 2.2 * math.exp(-(((t - 720.0) / 90.0) ** 2))
    return base + burst


def arrivals(rng: random.Random) -> list[float]:
    """Non-homogeneous Poisson arrivals by thinning."""
    peak, t, out = 3.8, 0.0, []
    while True:
        t += rng.expovariate(peak)
        if t >= DURATION_S:
            return out
        if rng.random() < rate_at(t) / peak:
            out.append(t)


def history(rng: random.Random) -> str:
    rows = []
    for _ in range(rng.randint(8, 60)):
        day = rng.randint(1, 28)
        rows.append(f"2026-10-{day:02d} {rng.choice(SHOPS)} {rng.uniform(2, 400):.2f} GBP")
    return "Recent transactions:\n" + "\n".join(rows)


def messages_for(rng: random.Random) -> list[dict]:
    question = rng.choice(QUESTIONS).format(shop=rng.choice(SHOPS), country=rng.choice(COUNTRIES))
    messages = []
    if rng.random() < 0.7:
        messages.append({"role": "system", "content": SYSTEM})
    if rng.random() < 0.25:
        question = history(rng) + "\n\n" + question
    if rng.random() < 0.3:
        messages.append(
            {
                "role": "user",
                "content": rng.choice(QUESTIONS).format(shop=rng.choice(SHOPS), country=rng.choice(COUNTRIES)),
            }
        )
        messages.append({"role": "assistant", "content": "Thanks, I can help with that. " * rng.randint(2, 12)})
    messages.append({"role": "user", "content": question})
    return messages


def record(rng: random.Random, index: int, offset_s: float) -> dict:
    return logged(rng, index, offset_s, messages_for(rng))


def logged(
    rng: random.Random, index: int, offset_s: float, messages: list[dict], tenant_route: tuple | None = None
) -> dict:
    output_tokens = max(4, min(400, int(rng.lognormvariate(math.log(70), 0.6))))
    tenant, route = tenant_route or rng.choices([(t, r) for t, r, _ in TENANTS], weights=[w for *_, w in TENANTS])[0]
    prompt_tokens = count_message_tokens(messages)
    return {
        "id": f"req-{index:06d}",
        "timestamp": (START + timedelta(seconds=offset_s)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "tenant": tenant,
        "route": route,
        "request": {"model": "support-assistant", "messages": messages, "max_tokens": 512},
        "response": {"usage": {"prompt_tokens": prompt_tokens, "completion_tokens": output_tokens}},
        "latency_ms": round(250 + 0.4 * prompt_tokens + 22.0 * output_tokens * rng.uniform(0.8, 1.3), 1),
    }


def request_fields(conversation: str) -> dict:
    """The request fields a client of the assistant sets, drawn per conversation (its turns offer
    the same tools) from a seed of their own, so the messages and times above are unchanged: a third
    offer the bank's tools (tool_choice auto), one in seven asks for a JSON-schema answer (intent
    routing), a quarter set a reasoning effort."""
    rng = random.Random(f"{REQUEST_SEED}/{conversation}")
    fields: dict = {"temperature": rng.choice([0.0, 0.2, 0.7])}
    if rng.random() < 1 / 3:
        fields.update(tools=BANK_TOOLS, tool_choice="auto")
    elif rng.random() < 1 / 7 * 3 / 2:
        fields["response_format"] = INTENT_FORMAT
    if rng.random() < 0.25:
        fields["reasoning_effort"] = rng.choice(["low", "medium", "high"])
    return fields


def with_sessions(records: list[tuple[float, dict]], rng: random.Random) -> list[tuple[float, dict]]:
    """Some conversations go on: 1-2 more turns, each after the reply + a think time, each request
    carrying the conversation so far; then every request in arrival order."""
    turns = []
    for number, (offset_s, first) in enumerate(records, start=1):
        if rng.random() >= SESSION_SHARE:
            continue
        first["session_id"] = f"chat-{number:05d}"
        previous_s, previous = offset_s, first
        for _ in range(rng.randint(1, 2)):
            think_s = min(THINK_MAX_S, rng.lognormvariate(math.log(THINK_MEDIAN_S), THINK_SIGMA))
            at_s = previous_s + previous["latency_ms"] / 1e3 + think_s
            if at_s >= DURATION_S:
                break
            reply = REPLY * max(1, previous["response"]["usage"]["completion_tokens"] // 8)
            messages = [
                *previous["request"]["messages"],
                {"role": "assistant", "content": reply.strip()},
                {"role": "user", "content": rng.choice(FOLLOW_UPS)},
            ]
            turn = logged(rng, 0, at_s, messages, (first["tenant"], first["route"]))
            turn["session_id"] = first["session_id"]
            turns.append((at_s, turn))
            previous_s, previous = at_s, turn
    return sorted(records + turns, key=lambda pair: pair[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="examples/data/production_requests.jsonl")
    args = parser.parse_args()
    rng = random.Random(SEED)
    singles = [(t, record(rng, i + 1, t)) for i, t in enumerate(arrivals(rng))]
    lines = []
    for index, (_, entry) in enumerate(with_sessions(singles, random.Random(SESSION_SEED)), start=1):
        entry["id"] = f"req-{index:06d}"
        entry["request"].update(request_fields(entry.get("session_id") or entry["id"]))
        lines.append(json.dumps(entry, separators=(",", ":")))
    # Two broken lines, as real logs have: a truncated write and a record without usage.
    lines.insert(len(lines) // 3, lines[len(lines) // 3][:57])
    broken = json.loads(lines[len(lines) // 2])
    broken["id"] = "req-broken"
    del broken["response"]
    lines.insert(len(lines) // 2, json.dumps(broken, separators=(",", ":")))
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} lines to {path}")


if __name__ == "__main__":
    main()
