"""Every Python check rule fails on crafted bad data and passes on good (the great-expectations
suites are tested in test_expectations*.py)."""

import json
from pathlib import Path

from pipeline.files.hashing import sha256_file
from pipeline.quality import rules


def test_reject_rate():
    assert rules.reject_rate_within_budget(99, 1, 0.05).passed
    assert not rules.reject_rate_within_budget(90, 10, 0.05).passed
    assert not rules.reject_rate_within_budget(0, 0, 0.05).passed


def _profile(**overrides) -> dict:
    base = {
        f"{k}_{q}": v
        for k in ("prompt_tokens", "output_tokens")
        for q, v in (("p50", 10), ("p90", 20), ("p99", 30), ("max", 40))
    }
    return {**base, "arrival_rate_per_s": 2.0, "requests": 10, **overrides}


def test_quantiles_ordered():
    assert rules.quantiles_ordered(_profile()).passed
    assert not rules.quantiles_ordered(_profile(output_tokens_p90=5)).passed
    assert not rules.quantiles_ordered(_profile(arrival_rate_per_s=0)).passed


def test_lineage_hashes_match(tmp_path: Path):
    (tmp_path / "data").mkdir()
    raw = tmp_path / "data" / "raw.parquet"
    raw.write_bytes(b"rows")
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1")
    lineage = {
        "sql": "q.sql",
        "sql_sha256": sha256_file(sql),
        "staged_sql": [],
        "inputs": [{"path": "data/raw.parquet", "sha256": sha256_file(raw), "rows": 1}],
    }
    pack = {"figures": [{"lineage": lineage}]}
    assert rules.lineage_hashes_match(pack, tmp_path).passed
    raw.write_bytes(b"tampered")
    assert not rules.lineage_hashes_match(json.loads(json.dumps(pack)), tmp_path).passed
