"""Demo-sized replays on the reference endpoint's virtual-clock simulator, turned into real raw
timings and analysed by the project's own code (`pipeline.analysis.tabulate.tables`): what
`bench/ci_coverage.py` counts its coverage on.

A replay here is what the demo does: 60 s of bursty production-like arrivals (on/off bursts of
10 s, log-normal lengths) from an idle engine, warm-up and cool-down of 5 s cut off. Every
request's token times come from the serving model (`simulate(record_tokens=True)`), so TTFT,
TPOT, E2E and every inter-token gap are the engine's own, on one clock, without HTTP noise: the
figures' truths are known from one very long run of the same process.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import yaml

from pipeline.analysis.statistics.stats import nearest_rank
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.reference.oracle import Oracle
from pipeline.reference.serving_model import Sequence
from pipeline.reference.serving_profile import OracleConfig, ServingProfile, load_profile
from pipeline.reference.simulation import NS_PER_S, Arrival, bursty_mixed_arrivals, simulate
from pipeline.replay.recording import records
from pipeline.replay.recording.records import RequestOutcome, build_record
from pipeline.spec import Spec

ROOT = Path(__file__).resolve().parents[1]
DEMO_SPEC = ROOT / "examples" / "demo.yaml"
ANSWER_KEY = ROOT / "examples" / "data" / "banking77_slice.csv"

REPLAY_S, WARMUP_S, COOLDOWN_S = 60.0, 5.0, 5.0  # the demo's replay
RUN_S = REPLAY_S  # each measured run's length (`--replay-s`); the truth run is a multiple of it
# demo-like lengths: a chat bank's short prompts and replies
LENGTHS = {"prompt_median": 160, "prompt_sigma": 0.8, "output_median": 64, "output_sigma": 0.6, "max_tokens": 1024}
LATENCY_KINDS = {
    "ttft_p50": ("ttft_ms", 0.50),
    "ttft_p95": ("ttft_ms", 0.95),
    "ttft_p99": ("ttft_ms", 0.99),
    "e2e_p95": ("e2e_ms", 0.95),
    "tpot_p50": ("tpot_ms", 0.50),
    "itl_p50": ("itl_ms", 0.50),
    "itl_p99": ("itl_ms", 0.99),
}
RATE_KINDS = {
    "output_tokens_per_s": "output_tokens_per_s",
    "goodput": "goodput_requests_per_s",
    "sla_attainment": "sla_attainment",
}
ACCURACY_ITEMS = 200  # the demo slice's size


def demo_profile() -> ServingProfile:
    """The demo's reference endpoint (its serving model: faults are the HTTP layer's, not here)."""
    return load_profile("demo")


# arrival processes: `poisson` is the demo's (its production sample's index of dispersion is
# 0.90 at 1 s and 0.70 at 10 s, a Poisson process's is 1); `bursty` a harsher test: 10-s cycles,
# half of each at 6x the quiet rate (the on/off bursts of `bursty_mixed_arrivals`)
BURST_FACTORS = {"poisson": 1.0, "bursty": 6.0}


def arrivals(rate_per_s: float, duration_s: float, seed: int, process: str = "poisson") -> list[Arrival]:
    return bursty_mixed_arrivals(rate_per_s, duration_s, seed, burst_factor=BURST_FACTORS[process], **LENGTHS)


def capacity_requests_per_s(profile: ServingProfile, seed: int = 7, requests: int = 3000) -> float:
    """The endpoint's service rate for this mix: a backlog of `requests` all offered at once,
    served as fast as the engine can (requests over the time to drain it)."""
    backlog = [dataclasses.replace(a, arrival_ns=0) for a in arrivals(1000.0, requests / 1000.0, seed)]
    sim = simulate(profile, backlog)
    return len(backlog) / (max(s.end_ns or 0 for s in sim.requests) / NS_PER_S)


def raw_timings(profile: ServingProfile, offered: list[Arrival]) -> pa.Table:
    """The simulated replay as raw timings (the replay's own record builder and schema)."""
    sim = simulate(profile, offered, record_tokens=True)
    return timings_table(
        [(seq, arrival, sim.token_ns.get(seq.seq_id, [])) for seq, arrival in zip(sim.requests, offered)]
    )


def timings_table(served: list[tuple[Sequence, Arrival, list[int]]]) -> pa.Table:
    """Raw timings of served requests (each its engine sequence, what was offered, its token
    times), sent at its arrival: the replay's own record builder and schema."""
    rows = []
    for seq, arrival, chunks in served:
        outcome = RequestOutcome(
            t_sent_ns=arrival.arrival_ns,
            sent_at=datetime(2026, 11, 30, tzinfo=UTC),
            t_end_ns=seq.end_ns or arrival.arrival_ns,
            t_first_byte_ns=arrival.arrival_ns,
            chunk_times_ns=chunks,
            http_status=200,
            prompt_tokens=arrival.prompt_tokens,
            output_tokens=len(chunks),
            output_tokens_client=len(chunks),
        )
        rows.append(
            build_record(
                run_id="coverage",
                candidate="sim",
                request_id=str(seq.seq_id),
                scheduled_offset_s=arrival.arrival_ns / NS_PER_S,
                t_scheduled_ns=arrival.arrival_ns,
                prompt_tokens_client=arrival.prompt_tokens,
                max_tokens=arrival.output_tokens,
                outcome=outcome,
            )
        )
    return pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA)


def spec(sla_ttft_ms: float | None, batches: int | None = None, intervals: str = "dependence_aware") -> Spec:
    """The demo spec, windowed like the demo, with the SLA under test (TTFT only); `batches`
    and `intervals` override the spec's analysis settings (the default: the spec's)."""
    data = yaml.safe_load(DEMO_SPEC.read_text())
    data["workload"]["log"]["path"] = str(ROOT / "examples" / "data" / "production_requests.jsonl")
    data["accuracy"]["path"] = str(ANSWER_KEY)
    data["workload"]["replay"].update(warmup_s=WARMUP_S, cooldown_s=COOLDOWN_S)
    data["sla"] = {"ttft_ms": sla_ttft_ms}
    data.setdefault("analysis", {})["intervals"] = intervals
    if batches is not None:
        data["analysis"]["interval_batches"] = batches
    return Spec.model_validate(data)


@dataclass(frozen=True)
class Estimate:
    value: float | None
    ci_low: float | None
    ci_high: float | None

    def covers(self, truth: float) -> bool:
        """An open end (None: the run was too short to bound it) covers every value on its side."""
        low = -math.inf if self.ci_low is None else self.ci_low
        high = math.inf if self.ci_high is None else self.ci_high
        return low <= truth <= high

    @property
    def bounded(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None


def estimates(table: pa.Table, run_spec: Spec) -> dict[str, Estimate]:
    """Every figure kind's value and interval, as the pack would report them."""
    latency = tables.latency_percentiles(table, run_spec).to_pylist()
    by_key = {(r["metric"], r["q"]): r for r in latency if r["scope"] == "all"}
    out = {}
    for kind, (metric, q) in LATENCY_KINDS.items():
        row = by_key[(metric, q)]
        out[kind] = Estimate(row["value"], row["ci_low"], row["ci_high"])
    rates = tables.throughput(table, run_spec).to_pylist()[0]
    for kind, column in RATE_KINDS.items():
        out[kind] = Estimate(rates[column], rates[f"{column}_ci_low"], rates[f"{column}_ci_high"])
    return out


def truths(profile: ServingProfile, offered: list[Arrival], settle_s: float) -> dict[str, float]:
    """The figures of one very long run, from every request offered after `settle_s` (nearest
    rank, as the analysis defines a percentile; rates per second of send time), with the
    replay's own definitions of TTFT, TPOT, E2E and a gap (`pipeline.replay.recording.records`)."""
    sim = simulate(profile, offered, record_tokens=True)
    values: dict[str, list[float]] = {"ttft_ms": [], "e2e_ms": [], "tpot_ms": [], "itl_ms": []}
    sent, output_tokens = [], 0
    for seq, arrival in zip(sim.requests, offered):
        if arrival.arrival_ns < settle_s * NS_PER_S:
            continue
        chunks = sim.token_ns[seq.seq_id]
        ttft, e2e = records.ttft_ms(arrival.arrival_ns, chunks[0]), records.e2e_ms(arrival.arrival_ns, seq.end_ns or 0)
        values["ttft_ms"].append(ttft)
        values["e2e_ms"].append(e2e)
        tpot = records.tpot_ms(e2e, ttft, len(chunks))
        if tpot is not None:
            values["tpot_ms"].append(tpot)
        values["itl_ms"].extend(round(gap * 1000) / 1000 for gap in records.itl_ms(chunks))  # 1 µs, as itl_histogram
        sent.append(arrival.arrival_ns)
        output_tokens += len(chunks)
    out = {}
    for kind, (metric, q) in LATENCY_KINDS.items():
        ordered = sorted(values[metric])
        out[kind] = ordered[nearest_rank(len(ordered), q) - 1]
    span_s = (max(sent) - min(sent)) / NS_PER_S
    out["output_tokens_per_s"] = output_tokens / span_s
    out["_span_s"] = span_s
    out["_requests"] = len(sent)
    out["_ttft_values"] = values["ttft_ms"]  # type: ignore[assignment]  # for the SLA truths
    return out


def sla_truths(long_run: dict, sla_ttft_ms: float) -> dict[str, float]:
    """Goodput and SLA attainment of the long run under a TTFT bound."""
    good = sum(1 for ttft in long_run["_ttft_values"] if ttft <= sla_ttft_ms)
    return {"goodput": good / long_run["_span_s"], "sla_attainment": good / long_run["_requests"]}


def accuracy_oracle() -> tuple[Oracle, list[tuple[str, str]], float]:
    """The budget candidate's oracle (80 % on every intent) over the demo's answer key, and the
    truth: the expected accuracy is the mean probability of a correct answer."""
    config = OracleConfig(answer_key=str(ANSWER_KEY), text_field="text", label_field="label", accuracy=0.8, seed=0)
    oracle = Oracle(config)
    items = list(oracle.key.items())
    return oracle, items, sum(config.probability(label) for _, label in items) / len(items)


def accuracy_run(items: list[tuple[str, str]], oracle: Oracle, seed: int) -> tuple[int, int]:
    """One slice scored through the oracle: `ACCURACY_ITEMS` items drawn with the run's seed,
    each prompt salted by the seed (the oracle's draw is seeded by the prompt) so runs differ."""
    rng = random.Random(seed)
    drawn = rng.choices(items, k=ACCURACY_ITEMS)
    correct = 0
    for number, (text, label) in enumerate(drawn):
        answer = oracle.answer([{"role": "user", "content": f"[{seed}.{number}] {text}"}])
        correct += answer == label
    return correct, len(drawn)
