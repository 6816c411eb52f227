"""The pack's plots, drawn from the pack's own tables (sample, raw timings) — never re-measured."""

from __future__ import annotations

from collections import Counter, defaultdict

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.analysis import analysis_params
from pipeline.layout import PackLayout
from pipeline.pack import plots
from pipeline.spec import Spec
from pipeline.sqlrun import run_query

NS = 1e9


def workload_charts(sample: pa.Table) -> dict[str, str | None]:
    offsets = sample.column("window_offset_s").to_pylist()
    per_second = Counter(int(offset) for offset in offsets)
    seconds = list(range(int(max(offsets, default=0)) + 1))
    return {
        "prompt_lengths": plots.histogram({"prompt tokens": sample.column("prompt_tokens").to_pylist()}, "prompt tokens per request"),
        "output_lengths": plots.histogram({"output tokens": sample.column("output_tokens").to_pylist()}, "output tokens per request"),
        "arrivals": plots.timeline(
            {"sampled production arrivals": (seconds, [per_second.get(s, 0) for s in seconds])},
            "seconds into the sampled window",
            "requests per second",
        ),
    }


def latency_charts(marked: list[dict], spec: Spec) -> dict[str, str | None]:
    by_candidate: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in marked:
        if row["status"] == "ok" and row["in_steady_window"]:
            for metric in ("ttft_ms", "e2e_ms"):
                by_candidate[metric][row["candidate"]].append(row[metric])
    claims = spec.claim.figures
    ttft_bounds = {f"claimed p95 {claims['ttft_ms_p95']:g} ms": claims["ttft_ms_p95"]} if "ttft_ms_p95" in claims else {}
    e2e_bounds = {f"claimed p99 {claims['e2e_ms_p99']:g} ms": claims["e2e_ms_p99"]} if "e2e_ms_p99" in claims else {}
    if spec.sla.ttft_ms:
        ttft_bounds[f"SLA {spec.sla.ttft_ms:g} ms"] = spec.sla.ttft_ms
    if spec.sla.e2e_ms:
        e2e_bounds[f"SLA {spec.sla.e2e_ms:g} ms"] = spec.sla.e2e_ms
    return {
        "ttft_cdf": plots.cdf(dict(by_candidate["ttft_ms"]), "TTFT (ms)", ttft_bounds),
        "e2e_cdf": plots.cdf(dict(by_candidate["e2e_ms"]), "E2E latency (ms)", e2e_bounds),
    }


def throughput_charts(marked: list[dict]) -> dict[str, str | None]:
    """Output tokens/s and goodput per 1-second bucket of completion time, per candidate."""
    tokens: dict[str, Counter] = defaultdict(Counter)
    good: dict[str, Counter] = defaultdict(Counter)
    done: dict[str, Counter] = defaultdict(Counter)
    starts: dict[str, int] = {}
    for row in marked:
        if row["t_sent_ns"] is not None:
            starts[row["candidate"]] = min(starts.get(row["candidate"], row["t_sent_ns"]), row["t_sent_ns"])
    for row in marked:
        if row["status"] != "ok":
            continue
        second = int((row["t_end_ns"] - starts[row["candidate"]]) / NS)
        tokens[row["candidate"]][second] += row["output_tokens"] or 0
        done[row["candidate"]][second] += 1
        good[row["candidate"]][second] += bool(row["met_sla"])

    def series(counters: dict[str, Counter], suffix: str = "") -> dict:
        out = {}
        for name, counter in counters.items():
            xs = list(range(max(counter) + 1)) if counter else []
            out[name + suffix] = (xs, [counter.get(x, 0) for x in xs])
        return out

    return {
        "throughput_timeline": plots.timeline(series(tokens), "seconds since the replay's first send", "output tokens per second"),
        "goodput_timeline": plots.timeline(
            {**series(done, " completed"), **series(good, " met SLA (goodput)")},
            "seconds since the replay's first send",
            "requests per second",
        ),
    }


def pack_charts(layout: PackLayout, spec: Spec) -> dict[str, str | None]:
    marked = run_query("steady_requests", {"raw_timings": layout.table("raw_timings")}, analysis_params(spec)).to_pylist()
    charts = workload_charts(pq.read_table(layout.table("production_sample")))
    charts.update(latency_charts(marked, spec))
    charts.update(throughput_charts(marked))
    return charts



