"""Each server family's recorded /metrics (tests/fixtures/server_metrics/) scraped over loopback
by the replay's own scraper, at chosen instants, into the pack's server view: running, waiting,
KV-cache use, pre-emptions and the prefix-cache hit rate as series over time, the TTFT and E2E
histograms; every sweep level's samples beside the production replay's in one file; and the
DCGM exporter's energy per output token."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.analysis.endpoint_view.gpu_view import gpu_energy
from pipeline.analysis.endpoint_view.server_view import SERIES, server_levels, server_view, ttft_comparison
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA, RAW_TIMINGS, SERVER_METRICS, SWEEP_TIMINGS
from pipeline.files.layout import PackLayout
from pipeline.replay.endpoint.server_metrics import write_scope
from tests.support.prometheus_fixtures import FIXTURES, fixture, scaled_counters, scraped

S = 1_000_000_000
# (running, waiting, KV use, pre-emptions between the two scrapes, prefix-cache hit rate between them)
EXPECTED = {
    "vllm": (12.0, 3.0, 0.42, 5.0, 0.25),  # hit rate: (20 000 − 10 000) / (80 000 − 40 000) tokens
    "sglang": (12.0, 3.0, 0.42, 5.0, 0.25),  # hit rate: its own gauge
    "tgi": (12.0, 3.0, None, None, None),
    "llamacpp": (12.0, 3.0, 0.42, None, None),
}
OLD_NAMES = {"vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_hit_rate"}  # older vLLM's, same series


def _timings(rows: list[tuple[str, int, int, float, float]], level: float | None = None) -> pa.Table:
    records = [
        {
            "run_id": "run-1",
            "candidate": candidate,
            "request_id": f"{candidate}-{i}",
            "status": "ok",
            "t_sent_ns": sent,
            "t_end_ns": end,
            "ttft_ms": ttft,
            "e2e_ms": e2e,
            "output_tokens": 10,
        }
        for i, (candidate, sent, end, ttft, e2e) in enumerate(rows)
    ]
    table = pa.Table.from_pylist(records, schema=RAW_TIMING_RECORD_SCHEMA)
    if level is None:
        return table
    table = table.append_column("load_level", pa.array([level] * table.num_rows, pa.float64()))
    return table.append_column("load_level_label", pa.array([f"{level:g}×"] * table.num_rows, pa.string()))


def test_every_mapped_family_is_in_a_recorded_scrape_that_cites_its_source():
    texts = {path.stem: path.read_text() for path in FIXTURES.glob("*.prom")}
    assert set(EXPECTED) | {"dcgm"} == set(texts)
    recorded = " ".join(texts.values())
    assert {family for family in SERIES if family not in OLD_NAMES and family not in recorded} == set()
    for text in texts.values():  # a header before the first family, naming where the names come from
        header = text.split("# HELP")[0].split("# TYPE")[0]
        assert header.startswith("# A recorded") and "names from" in " ".join(header.split())


@pytest.mark.parametrize("server", sorted(EXPECTED))
def test_each_server_family_maps_to_the_canonical_series(server: str):
    text = fixture(server)
    metrics = scraped([text, scaled_counters(text, 2.0)], [1 * S, 2 * S])
    view = server_view(metrics, _timings([("c", 0, 3 * S, 30.0, 900.0), ("c", S // 2, 3 * S, 40.0, 700.0)]))
    first, second = view.timeline
    running, waiting, kv, preemptions, hit_rate = EXPECTED[server]
    assert (second["second"], second["running"], second["waiting"]) == (2.0, running, waiting)
    assert second["kv_cache_use"] == kv
    assert second["preemptions"] == preemptions and first["preemptions"] == (0.0 if preemptions else None)
    assert second["prefix_cache_hit_rate"] == hit_rate
    (row,) = ttft_comparison(view) or [None]
    if server in ("vllm", "sglang"):  # TTFT and E2E histograms: the second scrape less the first
        assert row["server_requests"] == 100 and math.isclose(row["server_ttft_ms_p50"], 36.0)
        assert math.isclose(row["server_e2e_ms_p50"], 800.0) and row["client_e2e_ms_p50"] == 700.0
    else:
        assert row is None  # TGI's only histogram is E2E, llama.cpp has none: no TTFT comparison
    if server == "tgi":
        assert [le for le, _ in view.e2e_buckets["c"]][-1] == math.inf


def test_each_sweep_level_is_kept_beside_the_production_replay_and_shows_its_queue(tmp_path: Path):
    layout = PackLayout(tmp_path)
    busy = fixture("vllm").replace("num_requests_waiting{", "num_requests_waiting_unused{")
    busy += 'vllm:num_requests_waiting{engine="0",model_name="m"} 40.0\n'
    # an old file (no endpoint, no load_level) stands for the production replay's samples
    old = scraped([fixture("vllm")], [1 * S]).drop_columns(["endpoint", "load_level"])
    layout.path(SERVER_METRICS).parent.mkdir(parents=True)
    pq.write_table(old, layout.path(SERVER_METRICS))
    level = scraped([busy], [21 * S], scope={"load_level": 4.0})
    write_scope(layout, [level], "load_level")
    pq.write_table(_timings([("c", 0, 3 * S, 30.0, 900.0)], level=1.0), layout.path(RAW_TIMINGS))
    pq.write_table(_timings([("c", 20 * S, 22 * S, 90.0, 990.0)], level=4.0), layout.path(SWEEP_TIMINGS))
    rows = server_levels(layout)
    assert [(r["load_level_label"], r["production"], r["waiting_max"], r["running_max"]) for r in rows] == [
        ("1×", True, 3.0, 12.0),
        ("4×", False, 40.0, 12.0),
    ]
    # the production replay re-run replaces its own rows only
    write_scope(layout, [scraped([fixture("vllm")], [2 * S])], None)
    table = pq.read_table(layout.path(SERVER_METRICS))
    assert sorted(set(table.column("load_level").to_pylist()), key=lambda v: v or 0) == [None, 4.0]
    assert set(table.filter(pa.compute.is_null(table.column("load_level"))).column("t_ns").to_pylist()) == {2 * S}


def _dcgm_later(text: str) -> str:
    # 10 s later: GPU 0 used 2 000 J, GPU 1 1 500 J (the counter is in mJ)
    return text.replace("} 1000000000", "} 1002000000").replace("} 2000000000", "} 2001500000")


def test_energy_per_output_token_from_the_dcgm_exporter():
    text = fixture("dcgm")
    gpu = scraped([text, _dcgm_later(text)], [1 * S, 11 * S], endpoint="gpu")
    server = scraped([fixture("vllm")], [1 * S])
    timings = _timings([("c", 0, 12 * S, 30.0, 900.0)])
    throughput = [{"candidate": "c", "output_tokens_per_s": 100.0}]
    (row,) = gpu_energy(pa.concat_tables([server, gpu]), timings, 0.5, 0.5, throughput)
    assert (row["gpus"], row["scrapes"], row["seconds"], row["power_source"]) == (2, 2, 10.0, "energy counter")
    assert (row["energy_j"], row["mean_power_w"], row["gpu_util_pct_mean"]) == (3500.0, 350.0, 70.0)
    assert row["joules_per_output_token"] == 3.5
    # an exporter without the energy counter: the power gauge's mean (400 W + 300 W)
    no_counter = "\n".join(line for line in text.splitlines() if "TOTAL_ENERGY" not in line) + "\n"
    (row,) = gpu_energy(scraped([no_counter], [5 * S], endpoint="gpu"), timings, 0.5, 0.5, throughput)
    assert (row["power_source"], row["mean_power_w"], row["joules_per_output_token"]) == ("power gauge", 700.0, 7.0)
