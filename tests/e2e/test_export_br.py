"""`loadproof export PACK --format br0.2` on the session's demo pack (two candidates, a load sweep and
the arms): one document per candidate and load stage, each valid against llm-d's Benchmark Report
v0.2 pydantic models (`llmd-benchmark-report`, pinned in the test extra) with nothing dropped by
them, null-free so that it deep-merges, and its figures the pack's own."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from llmd_benchmark_report import BenchmarkReportV02
from typer.testing import CliRunner

from pipeline.cli import app
from tests.support.demo_pack import CANDIDATES, DemoPack

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(demo_pack: DemoPack, tmp_path_factory) -> dict[Path, dict]:
    out = tmp_path_factory.mktemp("br0.2")
    result = CliRunner().invoke(app, ["export", str(demo_pack.folder), "--format", "br0.2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {path: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(out.rglob("*.yaml"))}


def _nulls(value, where="") -> list[str]:
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in _nulls(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [hit for i, item in enumerate(value) for hit in _nulls(item, f"{where}[{i}]")]
    return [where] if value is None else []


def _dropped(document, kept, where="") -> list[str]:
    """What of `document` the models did not keep as it is (BR's statistics ignore keys they do not
    know; the models may add their defaults, which is no loss)."""
    if isinstance(document, dict):
        if not isinstance(kept, dict):
            return [where]
        return [hit for key, item in document.items() for hit in _dropped(item, kept.get(key), f"{where}.{key}")]
    if isinstance(document, list):
        if not isinstance(kept, list) or len(kept) != len(document):
            return [where]
        return [hit for i, item in enumerate(document) for hit in _dropped(item, kept[i], f"{where}[{i}]")]
    return [] if document == kept else [where]


def _candidate_folder(demo_pack: DemoPack, candidate: str) -> Path:
    (folder,) = (demo_pack.folder / "candidates" / candidate).glob("*/data")  # one version
    return folder


def test_every_document_is_a_valid_br02_report_the_models_keep_whole(exported):
    assert exported
    for path, document in exported.items():
        report = BenchmarkReportV02.model_validate(document)
        assert not _dropped(document, report.model_dump(mode="json")), (path, _dropped(document, report.model_dump()))
        assert document["version"] == "0.2.1"
        assert not _nulls(document), (path, _nulls(document))


def test_one_document_per_stage_production_then_each_sweep_level_then_each_arm(demo_pack, exported):
    for candidate in CANDIDATES:
        data = _candidate_folder(demo_pack, candidate)
        levels = pq.read_table(data / "sweep_levels.parquet").to_pylist()
        arms = dict.fromkeys(row["arm"] for row in pq.read_table(data / "arm_figures.parquet").to_pylist())
        mine = [doc for path, doc in exported.items() if f"loadproof.{candidate}." in path.name]
        stages = sorted(mine, key=lambda doc: doc["scenario"]["load"]["standardized"]["stage"])
        kinds = [doc["scenario"]["load"]["native"]["config"]["loadproof"]["stage"] for doc in stages]
        further = sum(1 for row in levels if not row["production"])
        assert further > 0 and arms
        assert kinds == ["production_load"] + ["sweep_level"] * further + ["arm"] * len(arms)
        assert [
            doc["scenario"]["load"]["native"]["config"]["loadproof"]["arm"] for doc in stages[1 + further :]
        ] == list(arms)
        assert len({doc["run"]["uid"] for doc in stages}) == len(stages)  # unique per document
        assert len({doc["run"]["eid"] for doc in stages}) == 1  # one run, one experiment


def test_the_figures_are_the_packs_own(demo_pack, exported):
    for candidate in CANDIDATES:
        data = _candidate_folder(demo_pack, candidate)
        figures = {
            row["metric"]: row
            for row in pq.read_table(data / "figures.parquet").to_pylist()
            if row["basis"] == "production_load" and row["repeat"] is None
        }
        throughput = pq.read_table(data / "throughput.parquet").to_pylist()[0]
        (production,) = [doc for path, doc in exported.items() if f"loadproof.{candidate}.stage_0." in path.name]
        aggregate = production["results"]["request_performance"]["aggregate"]
        assert aggregate["requests"] == {
            "total": throughput["requests_planned"],
            "failures": throughput["requests_failed"],
        }
        assert aggregate["throughput"]["output_token_rate"] == {
            "units": "tokens/s",
            "mean": figures["output_tokens_per_s"]["measured"],
        }
        assert aggregate["throughput"]["request_rate"]["units"] == "queries/s"
        latency = aggregate["latency"]
        assert set(latency) == {
            "time_to_first_token",
            "time_per_output_token",
            "inter_token_latency",
            "request_latency",
        }
        ttft = latency["time_to_first_token"]
        assert ttft["units"] == "ms" and latency["time_per_output_token"]["units"] == "ms/token"
        for key, suffix in (("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"), ("p99p9", "p999")):
            assert ttft[key] == figures[f"ttft_ms_{suffix}"]["measured"]
        assert ttft["min"] <= ttft["p50"] <= ttft["max"] and ttft["min"] <= ttft["mean"] <= ttft["max"]
        assert not {"p0p1", "p1", "p5", "p10", "p25", "p75"} & set(ttft)  # never read, never made up
