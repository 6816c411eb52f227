"""The simulator checked against a real engine: measure a running OpenAI-compatible server
(llama-server, vLLM, ...) at a few levels and fit the reference endpoint's serving profile to it,
so the demo's simulator can be compared with the engine it stands in for (`loadproof fit-profile`,
bench/fit_profile_capacity.py).

The reference endpoint's step model (serving_model.py): a step costs `step_overhead_ms +
prefill_ms_per_token × prefill tokens + decode_ms_per_token × (1 + decode_slowdown_per_seq ×
(decoding sequences − 1))`, at most `max_running_seqs` sequences run at once. Measured, on the
monotonic clock, every request streamed:

- **prefill**: one request at a time, prompts of `PREFILL_WORDS` words behind a fresh nonce (no
  prefix cache serves them), one output token: TTFT against the server's own prompt-token count
  (usage), least squares — the slope is `prefill_ms_per_token`; the intercept (what a request costs
  beyond its prompt: the HTTP path and the first token's step) is reported, not modelled (a
  `step_overhead_ms` would charge it to every decode step: measured, that halved the simulated
  tokens/s of one request in flight);
- **decode**: `c` requests at once for each `c` up to the slots, short prompts, `DECODE_TOKENS`
  tokens each (`ignore_eos`): the median TPOT at each `c` is a decode step with `c` sequences,
  least squares on `d × (1 + s × (c − 1))` — `decode_ms_per_token` = d, `decode_slowdown_per_seq` = s;
- **slots**: the server's `/props` `total_slots` (llama.cpp), else the caller's.

Every loop is bounded (a fixed number of requests, each with a timeout). The fitted profile has no
prefix cache (the measurements avoid it) and admits a request only when it fits (`reserve`).
"""

from __future__ import annotations

import json
import secrets
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import httpx
import numpy as np
import yaml

PREFILL_WORDS = (32, 128, 256, 512)
PREFILL_REPEATS = 2
DECODE_TOKENS = 32
DECODE_PROMPT = "Write a short note to a bank customer about their card."
TIMEOUT_S = 300.0
FILLER = "account card transfer payment balance statement"


@dataclass(frozen=True)
class Sample:
    """One streamed request: TTFT, E2E (ms) and the server's token counts."""

    ttft_ms: float
    e2e_ms: float
    prompt_tokens: int
    output_tokens: int

    @property
    def tpot_ms(self) -> float | None:
        return (self.e2e_ms - self.ttft_ms) / (self.output_tokens - 1) if self.output_tokens > 1 else None


@dataclass
class Measurements:
    """What `measure` saw: prefill samples, each decode level's samples, the slots."""

    slots: int
    prefill: list[Sample] = field(default_factory=list)
    decode: dict[int, list[Sample]] = field(default_factory=dict)


def _stream(client: httpx.Client, url: str, model: str, content: str, max_tokens: int) -> Sample:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "min_tokens": max_tokens,
        "ignore_eos": True,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    sent = time.perf_counter_ns()
    first = end = None
    usage: dict = {}
    # a connection per request: llama-server closes each one after a streamed reply
    with client.stream("POST", url, json=body, headers={"Connection": "close"}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                usage = chunk["usage"]
            if first is None and any((c.get("delta") or {}).get("content") for c in chunk.get("choices") or []):
                first = time.perf_counter_ns()
        end = time.perf_counter_ns()
    if first is None or not usage:
        raise ValueError(f"{url}: a reply without tokens or without usage; the fit needs both")
    return Sample(
        (first - sent) / 1e6, (end - sent) / 1e6, int(usage["prompt_tokens"]), int(usage["completion_tokens"])
    )


def server_slots(root_url: str) -> int | None:
    """llama.cpp's `/props` `total_slots`; None where the server has no such endpoint."""
    try:
        reply = httpx.get(f"{root_url}/props", timeout=5.0, trust_env=False)
        slots = reply.json().get("total_slots") if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return slots if isinstance(slots, int) and slots > 0 else None


def measure(
    base_url: str, model: str, slots: int | None = None, decode_levels: tuple[int, ...] | None = None
) -> Measurements:
    """Prefill and decode samples from the server at `base_url` (…/v1)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    found = slots or server_slots(root)
    if found is None:
        raise ValueError(
            f"{root}: no /props said how many sequences the server runs at once (not llama.cpp's server, or "
            "not reachable); pass the slots (--slots N)"
        )
    url = f"{base_url.rstrip('/')}/chat/completions"
    measured = Measurements(found)
    with httpx.Client(timeout=TIMEOUT_S, trust_env=False) as client:
        for words in PREFILL_WORDS:
            for _ in range(PREFILL_REPEATS):  # a fresh nonce first: no cached prefix
                content = f"{secrets.token_hex(8)} " + " ".join([FILLER] * (words // len(FILLER.split())))
                measured.prefill.append(_stream(client, url, model, content, 1))
    levels = decode_levels or tuple(sorted({1, 2, max(1, found // 2), found}))
    for level in levels:
        with httpx.Client(timeout=TIMEOUT_S, trust_env=False, limits=httpx.Limits(max_connections=level)) as client:
            with ThreadPoolExecutor(max_workers=level) as pool:
                prompts = [f"{secrets.token_hex(4)} {DECODE_PROMPT}" for _ in range(level)]
                measured.decode[level] = list(
                    pool.map(lambda p: _stream(client, url, model, p, DECODE_TOKENS), prompts)
                )
    return measured


def median_tpot(samples: list[Sample]) -> float:
    """The median TPOT of the samples that have one (more than one output token)."""
    return statistics.median(t for sample in samples if (t := sample.tpot_ms) is not None)


def fit(measured: Measurements, name: str = "fitted", model: str = "reference-model") -> dict:
    """The serving profile (as `ServingProfile` reads it) fitted to the measurements."""
    slope, _ = _prefill_line(measured)
    levels = sorted(measured.decode)
    tpot = [median_tpot(measured.decode[c]) for c in levels]
    if len(levels) > 1:
        per_seq, base = np.polyfit(np.array(levels, dtype=float) - 1, np.array(tpot), 1)
    else:
        per_seq, base = 0.0, tpot[0]
    decode = max(float(base), 1e-3)
    return {
        "name": name,
        "model": model,
        "prefill_ms_per_token": round(max(float(slope), 0.0), 6),
        "decode_ms_per_token": round(decode, 4),
        "decode_slowdown_per_seq": round(max(float(per_seq) / decode, 0.0), 6),
        "max_running_seqs": measured.slots,
        # the TTFT's intercept is a request's fixed cost (the HTTP path, the first token's step), not
        # a cost of every step: the step model has no place for it (profile_yaml's header says it)
        "step_overhead_ms": 0.0,
        "kv_policy": "reserve",
        "prefix_cache": False,
        "default_max_tokens": DECODE_TOKENS,
    }


def _prefill_line(measured: Measurements) -> tuple[float, float]:
    """TTFT against prompt tokens, least squares: (ms per prompt token, intercept ms)."""
    prompt = np.array([s.prompt_tokens for s in measured.prefill], dtype=float)
    slope, intercept = np.polyfit(prompt, np.array([s.ttft_ms for s in measured.prefill], dtype=float), 1)
    return float(slope), float(intercept)


def request_fixed_cost_ms(measured: Measurements) -> float:
    """The TTFT's intercept against prompt length: what a request costs beyond its prompt."""
    return _prefill_line(measured)[1]


def profile_yaml(profile: dict, measured: Measurements, source: str) -> str:
    """The fitted profile as YAML, its header saying what it was fitted to."""
    decode = ", ".join(
        f"{c} at once: TPOT p50 {median_tpot(measured.decode[c]):.1f} ms" for c in sorted(measured.decode)
    )
    header = (
        f"# Fitted by `loadproof fit-profile` to {source}: {len(measured.prefill)} prefill samples "
        f"({min(s.prompt_tokens for s in measured.prefill)}–{max(s.prompt_tokens for s in measured.prefill)} prompt "
        f"tokens; a request's fixed cost {request_fixed_cost_ms(measured):.1f} ms, not modelled), decode {decode}; "
        f"{measured.slots} slots.\n"
    )
    return header + yaml.safe_dump(profile, sort_keys=False)
