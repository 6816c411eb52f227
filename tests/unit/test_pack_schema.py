"""The pack document's models: the committed JSON Schema is theirs, a document passes through them
unchanged, and a malformed pack is refused before it is written."""

import json

import jsonschema
import pytest
from pydantic import ValidationError

from pipeline.pack.document import EvidencePack, EvidencePackDraft, schema
from pipeline.pack.render.pages import JSON_NAME, write_pack

SHA = "0" * 64


def document() -> dict:
    """A small pack in the models' key order: optional keys present and absent, ints and floats,
    a table row with columns the models do not declare."""
    raw = {"path": "data/raw_timings.parquet", "sha256": SHA, "rows": 400}
    lineage = {"sql": "sql/latency_percentiles.sql", "sql_sha256": SHA, "staged_sql": [], "inputs": [raw]}
    return {
        "run_id": "run-1",
        "spec_sha256": SHA,
        "claim": {"source": "vendor blog", "figures": {"ttft_ms_p95": 250.0, "output_tokens_per_s": 4200}},
        "figures": [
            {
                "candidate": "a",
                "metric": "ttft_ms_p95",
                "unit": "ms",
                "claimed": 250.0,
                "measured": 300,
                "ci_low": 280.5,
                "ci_high": None,
                "n": 400,
                "verdict": "not reproduced",
                "lineage": lineage,
                "early_stopping": {"confidence": 0.975, "min_samples_to_hold": 72, "long_enough": True},
            },
            {
                "candidate": "a",
                "metric": "accuracy",
                "unit": "fraction",
                "claimed": None,
                "measured": 0.8,
                "ci_low": 0.7,
                "ci_high": 0.9,
                "n": 100,
                "verdict": None,
                "lineage": {"sql": "sql/accuracy_summary.sql", "inputs": [raw]},
                "delta": None,
            },
        ],
        "client_validity": {"schedule_lag_ms_p99": None, "client_limited": False, "calibration": None},
        "errors_by_type": [
            {
                "candidate": "a",
                "outcome": "timeout",
                "requests": 3,
                "requests_planned": 400,
                "rate": 0.0075,
                "rate_ci_low": 0.002,
                "rate_ci_high": 0.02,
                "run_id": "run-1",
            }
        ],
        "sweep": None,
        "data_quality": [{"asset": "raw_timings", "check": "one_row", "passed": True, "severity": "blocking"}],
        "lineage": {"run_id": "run-1", "asset_keys": ["raw_timings"], "code_version": "abc"},
        "manifest": [{"path": "spec.yaml", "sha256": SHA}],
    }


def test_the_committed_schema_is_generated_from_the_models():
    committed = schema.SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == schema.schema_text(), (
        "schemas/ drifted from pack/document/: python -m pipeline.pack.document.schema"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(committed))


def test_the_check_fails_on_a_stale_file(tmp_path):
    stale = tmp_path / "evidence_pack.schema.json"
    stale.write_text("{}\n")
    assert schema.main(["--check"], stale) == 1
    assert schema.main([], stale) == 0 and schema.main(["--check"], stale) == 0


def test_a_document_passes_through_the_models_unchanged():
    original = document()
    again = EvidencePack.model_validate(original).document()
    assert json.dumps(again, indent=2) == json.dumps(original, indent=2)  # same keys, order, ints and floats
    assert "delta" not in again["figures"][0] and again["figures"][1]["delta"] is None
    jsonschema.validate(again, schema.evidence_pack_schema())


def test_an_unknown_or_renamed_key_fails_at_once_but_a_table_column_is_kept():
    renamed = document()
    renamed["figures"][0]["measured_value"] = renamed["figures"][0].pop("measured")
    with pytest.raises(ValidationError, match="measured"):
        EvidencePack.model_validate(renamed)
    escaping = document()
    escaping["figures"][0]["lineage"]["inputs"][0]["path"] = "../../etc/passwd"
    with pytest.raises(ValidationError, match="pattern"):
        EvidencePack.model_validate(escaping)
    row = EvidencePack.model_validate(document()).errors_by_type[0]
    assert row.model_extra == {"run_id": "run-1"}


def test_a_pack_without_its_checks_and_lineage_is_never_written(tmp_path):
    draft = EvidencePackDraft.model_validate(
        {key: value for key, value in document().items() if key not in {"data_quality", "lineage", "manifest"}}
    )
    with pytest.raises(ValidationError, match="data_quality"):
        write_pack(tmp_path, draft, {}, confidence=0.95)
    assert not (tmp_path / JSON_NAME).exists()
