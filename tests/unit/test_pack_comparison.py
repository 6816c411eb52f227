"""Verdicts in the pack, side-by-side tables and the ranking by cost per useful decision."""

from pathlib import Path

import pyarrow as pa

from pipeline.analysis.judge import figures as claims
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.pack.assemble import comparison
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict


def spec_with(figures: dict) -> Spec:
    data = demo_spec_dict()
    data["claim"]["figures"] = figures
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["name"] = "c"
    return Spec.model_validate(data)


def latency_rows(tmp_path: Path, requests: int, spec: Spec) -> list[dict]:
    rows = [timing(f"q{i}", i * S // 20, (10 + i % 50) * MS, 500 * MS) for i in range(requests)]
    path = write_parquet(
        pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / f"raw{requests}.parquet"
    )
    return tables.latency_percentiles(path, spec).to_pylist()


def test_a_short_run_cannot_make_a_p99_claim_hold(tmp_path: Path):
    # every TTFT is at most 59 ms, far below the claimed 250 ms p99
    spec = spec_with({"ttft_ms_p99": 250.0, "ttft_ms_p50": 100.0})
    short = {f["metric"]: f for f in claims.latency_figures(spec, latency_rows(tmp_path, 100, spec))}
    assert short["ttft_ms_p99"]["verdict"] == "inconclusive"
    stopping = short["ttft_ms_p99"]["early_stopping"]
    assert stopping["effective_samples"] <= 100  # n over the design effect, never more than n
    assert {key: value for key, value in stopping.items() if key != "effective_samples"} == {
        "confidence": 0.975,
        "min_samples_to_hold": 368,
        "long_enough": False,
    }
    assert short["ttft_ms_p50"]["verdict"] == "holds"  # 100 samples are plenty for a median
    long = {f["metric"]: f for f in claims.latency_figures(spec, latency_rows(tmp_path, 400, spec))}
    assert long["ttft_ms_p99"]["verdict"] == "holds"
    assert long["ttft_ms_p99"]["early_stopping"]["long_enough"] is True


def test_bucket_rows_do_not_become_headline_figures(tmp_path: Path):
    spec = spec_with({"ttft_ms_p99": 250.0})
    rows = latency_rows(tmp_path, 50, spec)
    rows += [{**row, "scope": "0-255"} for row in rows]
    figures = claims.latency_figures(spec, rows)
    # seven families (TTFT and E2E twice: from the send, from the schedule; TTFO) × five percentiles, scope 'all' only
    assert len(figures) == 7 * 5


def test_side_by_side_and_ranking_for_two_candidates():
    def fig(candidate, metric, measured, claimed=None, verdict=None):
        return {
            "candidate": candidate,
            "metric": metric,
            "unit": "ms",
            "claimed": claimed,
            "measured": measured,
            "ci_low": None,
            "ci_high": None,
            "verdict": verdict,
        }

    figures = [
        fig("a", "ttft_ms_p95", 30.0, 250.0, "holds"),
        fig("b", "ttft_ms_p95", 300.0, 250.0, "not reproduced"),
        fig("a", "accuracy", 0.9),
        fig("b", "accuracy", 0.8),
    ]
    table = comparison.side_by_side(figures)
    assert table["candidates"] == ["a", "b"]
    assert [row["metric"] for row in table["rows"]] == ["ttft_ms_p95", "accuracy"]
    assert [cell["verdict"] for cell in table["rows"][0]["cells"]] == ["holds", "not reproduced"]

    cost = [
        {"candidate": "a", "cost_per_decision_usd": 0.004, "pricing": "hourly", "useful_decisions": 90.0},
        {"candidate": "b", "cost_per_decision_usd": 0.001, "pricing": "tokens", "useful_decisions": 80.0},
        {"candidate": "c", "cost_per_decision_usd": None, "pricing": "tokens", "useful_decisions": 0.0},
    ]
    ranked = comparison.ranking(
        cost, [{"candidate": "a", "sla_attainment": 1.0}], [{"candidate": "b", "accuracy": 0.8}]
    )
    assert [(r["rank"], r["candidate"]) for r in ranked] == [(1, "b"), (2, "a"), (3, "c")]
    assert ranked[0]["accuracy"] == 0.8 and ranked[1]["sla_attainment"] == 1.0
    assert ranked[0]["cost_per_1000_decisions_usd"] == 1.0


def test_long_enough_takes_the_effective_sample_size_and_a_closed_interval():
    """Stopping and the interval agree (issue 31, item 1): 400 requests reach a p99's 368 only when
    they are worth 368 independent ones (n over the design effect), and never with an open end."""
    assert claims.early_stopping_note(0.99, 400, 0.95)["long_enough"] is True
    dependent = claims.early_stopping_note(0.99, 400, 0.95, design_effect=2.0)
    assert dependent["effective_samples"] == 200.0 and dependent["long_enough"] is False
    calm = claims.early_stopping_note(0.99, 400, 0.95, design_effect=0.5)  # never worth more than n
    assert calm["effective_samples"] == 400.0 and calm["long_enough"] is True
    assert claims.early_stopping_note(0.99, 400, 0.95, closed=False)["long_enough"] is False
