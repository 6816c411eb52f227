"""The metric catalogue (`pipeline/analysis/declare/catalogue.py`) is the one declaration of every figure:
each entry, at each basis it declares, is computed (a row of `data/figures.parquet` with a value,
made from real analysis tables by the analysis's own code), checked (the `figures_consistent`
rule misses it when it is gone or wrong), and verifiable (`loadproof verify`'s comparison names
its row when it is edited). That each is rendered: tests/e2e/test_pack_e2e.py, on the demo pack.
Hand-built raw timings, real DuckDB."""

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.declare import catalogue
from pipeline.analysis.judge.figures import ARM_QUERY, VENDOR_CONDITIONS_ARM, values_at
from pipeline.analysis.judge.figures_table import (
    figures_from_table,
    figures_table,
    partition_figures,
    table_differences,
)
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.sizing.capacity import capacity_rows
from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.contracts import ACCURACY_RESULTS_SCHEMA, RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.quality import rules
from pipeline.replay.conditions.sweep import load_levels, with_load_level
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

ENTRIES = [(m.name, basis) for m in catalogue.CATALOGUE for basis in m.bases]


def spec() -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0, sweep={"time_scales": [0.5, 0.25]})
    data["sla"] = {"ttft_ms": 100, "min_attainment": 0.8, "max_error_rate": 0.2}
    # the SLO tier per user: met at 1× and 2× (TTFT 20, 30 ms), missed at 4× (900 ms)
    data["sla"]["per_user"] = {"output_tokens_per_s_min": 10, "ttft_ms_max": 100, "min_share": 0.8}
    # priced by the token: the bill check's cost ratio has a value (by the hour the bill counts no tokens)
    price = {"usd_per_million_input_tokens": 0.2, "usd_per_million_output_tokens": 0.6}
    data["candidates"] = [dict(data["candidates"][0], name="c", price=price)]
    # every figure claimed, under its own name: each is judged wherever it is measured
    data["claim"]["figures"] = dict.fromkeys(catalogue.names(), 1.0)
    return Spec.model_validate(data)


def requests(ttft_ms: int, prefix: str) -> list[dict]:
    """40 requests 250 ms apart, 20 output tokens each (5 of them reasoning), two of them failed;
    every fourth ends in a tool call (half of those valid), every other fourth answers a JSON schema."""
    return [
        timing(
            f"{prefix}{i}",
            S + i * 250 * MS,
            ttft_ms * MS,
            400 * MS,
            tokens=20,
            error="http_5xx" if i < 2 else None,
            reasoning=5,
            tool_call_valid=i % 8 == 0 if i % 4 == 0 else None,
            structured_output_valid=True if i % 4 == 1 else None,
        )
        for i in range(40)
    ]


def accuracy_results() -> pa.Table:
    rows = [
        {
            "candidate": "c",
            "item_id": f"i{i}",
            "label": "a",
            "predicted": "a" if i % 10 else "b",
            "correct": i % 10 != 0,
        }
        for i in range(100)
    ]
    return pa.Table.from_pylist([{**row, "status": "ok"} for row in rows], schema=ACCURACY_RESULTS_SCHEMA)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict:
    folder: Path = tmp_path_factory.mktemp("catalogue")
    the_spec = spec()
    levels = {level.value: level for level in load_levels(the_spec.workload.replay)}
    production = pa.Table.from_pylist(requests(20, "q"), schema=RAW_TIMING_RECORD_SCHEMA)
    raw = write_parquet(with_load_level(production, levels[1.0]), folder / "raw.parquet")
    sweep = write_parquet(
        pa.concat_tables(
            with_load_level(pa.Table.from_pylist(requests(ttft, f"l{value}-"), schema=RAW_TIMING_RECORD_SCHEMA), lvl)
            for (value, lvl), ttft in zip(sorted(levels.items())[1:], (30, 900))
        ),
        folder / "sweep.parquet",
    )
    accuracy = analysis_tables.accuracy_summary(accuracy_results(), the_spec)
    tables = {name: t.to_pylist() for name, t in analysis_tables.analyse_all(raw, the_spec, accuracy).items()}
    summary = sweep_analysis.sweep_summary(sweep_analysis.sweep_levels(raw, sweep, the_spec, accuracy), the_spec)
    tables |= {"accuracy_summary": accuracy.to_pylist(), "sweep_summary": summary.to_pylist()}
    # the vendor-conditions arm, read as pipeline/analysis/judge/arms.py reads an arm's own tables
    arm_rows = [
        dict(zip(("measured", "ci_low", "ci_high", "n", "interval_method"), values_at(tables, name, basis)))
        | {"candidate": "c", "arm": VENDOR_CONDITIONS_ARM, "metric": name}
        for name, basis in ENTRIES
        if basis == catalogue.VENDOR_CONDITIONS
    ]
    capacity = capacity_rows(the_spec, tables["sweep_summary"], None, peak_to_mean=1.5)  # the capacity asset's rows
    figures = partition_figures(the_spec, tables, raw, capacity, arm_rows)
    return {"spec": the_spec, "figures": figures, "table": figures_table(figures)}


@pytest.mark.parametrize(("name", "basis"), ENTRIES)
def test_every_entry_is_computed_at_each_of_its_bases(made, name, basis):
    rows = [r for r in made["table"].to_pylist() if (r["metric"], r["basis"]) == (name, basis)]
    assert len(rows) == 1, (name, basis)
    (row,) = rows
    assert row["measured"] is not None and row["n"] > 0, row
    entry = catalogue.metric(name)
    # an arm's figures are the headline queries over the window arm_window finds
    query = ARM_QUERY if basis == catalogue.VENDOR_CONDITIONS else entry.sources[basis].sql
    assert row["unit"] == entry.unit and row["query"] == query
    if (
        entry.sources[basis].ci_low is not None and entry.kind != "latency percentile"
    ):  # 38 requests: a tail may be open
        assert row["ci_low"] is not None and row["ci_high"] is not None, row
    assert row["verdict"] is not None or row["not_judged"], row  # claimed: judged, or why not


# a claim on goodput is about capacity, but goodput is measured only at the production load (served demand):
# no run judges it, so it is accounted for by an inconclusive figure at the capacity at the SLA, with why
UNJUDGED = [(name, catalogue.CAPACITY_AT_SLA) for name in ("goodput_requests_per_s", "goodput_output_tokens_per_s")]


def test_the_rows_are_exactly_the_catalogues_and_the_pack_reads_them_back(made):
    rows = made["table"].to_pylist()
    assert sorted((r["metric"], r["basis"]) for r in rows) == sorted(ENTRIES + UNJUDGED)
    for row in rows:
        if (row["metric"], row["basis"]) in UNJUDGED:
            assert row["verdict"] == "inconclusive" and row["measured"] is None and "served demand" in row["reason"]
    back = figures_from_table(made["table"])
    assert [(f["metric"], f["basis"], f["measured"]) for f in back] == [
        (f["metric"], f["basis"], f["measured"]) for f in made["figures"]
    ]


def check(rows: list[dict]) -> rules.Outcome:
    return rules.figures_consistent(rows, "c", list(spec().claim.figures), scored=True)


def test_the_check_passes_on_the_computed_table(made):
    outcome = check(made["table"].to_pylist())
    assert outcome.passed, outcome.metadata


@pytest.mark.parametrize("name", catalogue.names(basis=catalogue.PRODUCTION_LOAD))
def test_the_check_misses_every_production_load_entry_that_is_gone(made, name):
    rows = [r for r in made["table"].to_pylist() if (r["metric"], r["basis"]) != (name, catalogue.PRODUCTION_LOAD)]
    outcome = check(rows)
    assert not outcome.passed and outcome.metadata["missing_at_production_load"] == [name]


@pytest.mark.parametrize(("name", "basis"), [e for e in ENTRIES if catalogue.metric(e[0]).sources[e[1]].ci_low])
def test_the_check_misses_a_value_outside_its_interval(made, name, basis):
    rows = made["table"].to_pylist()
    for row in rows:
        if (row["metric"], row["basis"]) == (name, basis):
            # above the high end; an open high end (a short run's tail): below the low end
            row["measured"] = row["ci_high"] * 2 + 1 if row["ci_high"] is not None else row["ci_low"] - 1
    outcome = check(rows)
    assert not outcome.passed and outcome.metadata["measured_outside_interval"][0].startswith(f"{name} ({basis})")


@pytest.mark.parametrize(("name", "basis"), ENTRIES)
def test_verify_names_every_edited_row(made, name, basis):
    table = made["table"]
    edited = [
        {**r, "measured": r["measured"] * 3 + 1} if (r["metric"], r["basis"]) == (name, basis) else r
        for r in table.to_pylist()
    ]
    problems = table_differences(pa.Table.from_pylist(edited, schema=table.schema), table)
    assert problems == [
        f"data/figures.parquet: c/{name} ({basis}): measured in the file "
        + problems[0].split("measured in the file ")[1]
    ]
    assert table_differences(table, table) == []


def test_a_claim_may_use_the_fields_own_names():
    data = demo_spec_dict()
    data["claim"]["figures"] = {"p99_ttft_ms": 250, "output_throughput": 4200, "median_tpot_ms": 12}
    figures = Spec.model_validate(data).claim.figures
    assert figures == {"ttft_ms_p99": 250, "output_tokens_per_s": 4200, "tpot_ms_p50": 12}
    data["claim"]["figures"] = {"p99_ttft_ms": 250, "ttft_ms_p99": 240}
    with pytest.raises(ValueError, match="both claim 'ttft_ms_p99'"):
        Spec.model_validate(data)
