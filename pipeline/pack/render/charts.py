"""The pack's plots, drawn from the pack's own tables (sample, raw timings, throughput buckets) — never re-measured."""

from __future__ import annotations

from collections import Counter, defaultdict

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.analysis.endpoint_view.server_view import ServerView, read_server_view
from pipeline.analysis.tabulate.repeats import first_run
from pipeline.analysis.tabulate.tables import steady_requests
from pipeline.contracts import PRODUCTION_SAMPLE, RAW_TIMINGS, THROUGHPUT, THROUGHPUT_BUCKETS
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.steady_state import steady_state_section, tests_in_words, why_not_steady
from pipeline.pack.render import svg
from pipeline.spec import Spec


def workload_charts(sample: pa.Table) -> dict[str, str | None]:
    offsets = sample.column("window_offset_s").to_pylist()
    per_second = Counter(int(offset) for offset in offsets)
    seconds = list(range(int(max(offsets, default=0)) + 1))
    return {
        "prompt_lengths": svg.histogram(
            {"prompt tokens": sample.column("prompt_tokens").to_pylist()}, "prompt tokens per request"
        ),
        "output_lengths": svg.histogram(
            {"output tokens": sample.column("output_tokens").to_pylist()}, "output tokens per request"
        ),
        "arrivals": svg.timeline(
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
    ttft_bounds = (
        {f"claimed p95 {claims['ttft_ms_p95']:g} ms": claims["ttft_ms_p95"]} if "ttft_ms_p95" in claims else {}
    )
    e2e_bounds = {f"claimed p99 {claims['e2e_ms_p99']:g} ms": claims["e2e_ms_p99"]} if "e2e_ms_p99" in claims else {}
    if spec.sla.ttft_ms:
        ttft_bounds[f"SLA {spec.sla.ttft_ms:g} ms"] = spec.sla.ttft_ms
    if spec.sla.e2e_ms:
        e2e_bounds[f"SLA {spec.sla.e2e_ms:g} ms"] = spec.sla.e2e_ms
    return {
        "ttft_cdf": svg.cdf(dict(by_candidate["ttft_ms"]), "TTFT (ms)", ttft_bounds),
        "e2e_cdf": svg.cdf(dict(by_candidate["e2e_ms"]), "E2E latency (ms)", e2e_bounds),
    }


def steady_spans(throughput_rows: list[dict]) -> dict[str, tuple[float, float, bool]]:
    """Each candidate's window as the steady-state tests found it, labelled with their p-values and
    decisions (hatched, over the configured window, where there is no steady window)."""
    spans = {}
    for row in steady_state_section(throughput_rows):
        if row["window_start_s"] is None or row["window_end_s"] is None:
            continue
        head = f"{row['candidate']} steady window" if row["steady_window"] else f"{row['candidate']}: no steady window"
        if not row["steady_window"]:
            head += f" ({why_not_steady(row['reason'])})"
        spans[f"{head}\n{tests_in_words(row)}"] = (row["window_start_s"], row["window_end_s"], row["steady_window"])
    return spans


def throughput_charts(buckets: list[dict], throughput_rows: list[dict] | None = None) -> dict[str, str | None]:
    """Output tokens/s and goodput per 1-second bucket, per candidate, read from the
    throughput_buckets table (seconds since the candidate's first send; requests by send time), with
    each candidate's steady window and its tests shaded (the throughput table's `steady_*` columns)."""
    spans = steady_spans(throughput_rows or [])
    tokens: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    done: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    good: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for row in buckets:
        for series, value in ((tokens, row["output_tokens"]), (done, row["requests_ok"]), (good, row["requests_good"])):
            xs, ys = series[row["candidate"]]
            xs.append(row["second"])
            ys.append(value)
    return {
        "throughput_timeline": svg.timeline(
            dict(tokens), "seconds since the replay's first send", "output tokens per second", spans=spans
        ),
        "goodput_timeline": svg.timeline(
            {
                **{f"{name} completed": xy for name, xy in done.items()},
                **{f"{name} met SLA (goodput)": xy for name, xy in good.items()},
            },
            "seconds since the replay's first send",
            "requests per second",
            spans=spans,
        ),
    }


def server_view_charts(view: ServerView | None) -> dict[str, str | None]:
    """The server's queue and KV-cache use over the production replay beside the client's TTFT
    at each send, per candidate (pipeline/analysis/endpoint_view/server_view.py); none without server metrics."""
    if view is None:
        return {"server_view": None}
    keys = ("second", "running", "waiting", "kv_cache_use", "preemptions", "prefix_cache_hit_rate", "sent_s", "ttft_ms")
    entries: dict[str, dict[str, list]] = defaultdict(lambda: {key: [] for key in keys})
    for row in view.timeline:
        for key in keys[:6]:
            entries[row["candidate"]][key].append(row[key])
    for row in view.client_ttft:
        entries[row["candidate"]]["sent_s"].append(row["second"])
        entries[row["candidate"]]["ttft_ms"].append(row["ttft_ms"])
    return {"server_view": svg.server_view(dict(sorted(entries.items())))}


def comparison_charts(pack: dict) -> dict[str, str | None]:
    """Accuracy with its interval and cost per useful decision with its interval, per candidate,
    from the pack's own accuracy and ranking sections."""
    accuracy = pack.get("accuracy") or {}
    summary = accuracy.get("summary") or []
    claimed = next((row["claimed_accuracy"] for row in summary if row.get("claimed_accuracy") is not None), None)
    ranking = pack.get("ranking") or []
    return {
        "accuracy_intervals": svg.intervals(
            [(row["candidate"], row["accuracy"], row["accuracy_ci_low"], row["accuracy_ci_high"]) for row in summary],
            "accuracy on the labelled slice (interval: Wilson)",
            {f"claimed {claimed:g}": claimed} if claimed is not None else None,
        ),
        "cost_intervals": svg.intervals(
            [
                (
                    f"{row['rank']}. {row['candidate']}",
                    row["cost_per_decision_usd"],
                    row["cost_per_decision_usd_ci_low"],
                    row["cost_per_decision_usd_ci_high"],
                )
                for row in ranking
            ],
            "USD per useful decision (lower is better)",
        ),
    }


def pack_charts(layout: PackLayout, spec: Spec) -> dict[str, str | None]:
    # a repeated replay: the first run's, like the analysis tables beside the charts
    marked = steady_requests(first_run(layout.path(RAW_TIMINGS)), spec).to_pylist()
    charts = workload_charts(pq.read_table(layout.path(PRODUCTION_SAMPLE)))
    charts.update(latency_charts(marked, spec))
    throughput = pq.read_table(layout.path(THROUGHPUT)).to_pylist()
    charts.update(throughput_charts(pq.read_table(layout.path(THROUGHPUT_BUCKETS)).to_pylist(), throughput))
    charts.update(server_view_charts(read_server_view(layout)))
    return charts
