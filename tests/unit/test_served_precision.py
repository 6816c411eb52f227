"""The precision a candidate serves, measured, beside the claim's: a quantised candidate against a
higher-precision benchmark is a different model, and the proxy verdict says so in words
(pipeline/pack/assemble/served_precision.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from pipeline.analysis.declare import metrics
from pipeline.pack.assemble.served_precision import condition_rows, served_precision_rows, with_served_precision
from pipeline.pack.assemble.summary import measured_proxy_verdict
from pipeline.pack.audit.verify import Verification, _rederive_summary
from pipeline.replay.endpoint.engine_facts import from_llama_cpp_props
from pipeline.workload.divergence import GOOD_ENOUGH, RE_MEASURE

PROPS = json.loads((Path(__file__).parents[1] / "fixtures" / "engine_facts" / "llama_server_props.json").read_text())


def _fingerprint(candidate: str, engine: dict | None) -> dict:
    return {"candidate": candidate, "model": "m", "engine": engine}


LLAMA = _fingerprint("gemma-local", from_llama_cpp_props(PROPS))
SILENT = _fingerprint("hosted", None)
BF16_SERVER = _fingerprint(
    "bf16-server",
    {"source": "sglang /get_server_info", "quantization": "bfloat16", "precision": "bf16", "weight_bits": 16},
)


def test_a_quantised_candidate_against_a_bf16_benchmark_is_a_different_model():
    (row,) = served_precision_rows("bf16", [LLAMA])
    assert (row["served"], row["precision"], row["weight_bits"], row["different_model"]) == (
        "Q4_K - Medium",
        "q4_k_m",
        4,
        True,
    )
    assert row["reason"] == (
        "serves Q4_K - Medium (q4_k_m, 4-bit weights), read from llama.cpp /props; the claim's benchmark ran at "
        "bf16 (16-bit weights): a quantised candidate against a higher-precision benchmark is a different model, "
        "so the vendor's figures are no proxy for it"
    )


def test_same_bits_under_another_name_and_unknown_sides_decide_nothing():
    assert not served_precision_rows("fp16", [BF16_SERVER])[0]["different_model"]  # 16 bits both
    assert not served_precision_rows(None, [LLAMA])[0]["different_model"]  # the claim names none
    assert not served_precision_rows("bf16", [SILENT])[0]["different_model"]  # the server says nothing
    assert served_precision_rows("Q4_K_M", [LLAMA])[0]["different_model"] is False  # the claim ran the same quant
    # a claim measured on a more heavily quantised model than the candidate serves is as different
    (row,) = served_precision_rows("int4", [BF16_SERVER])
    assert row["different_model"] and "more heavily quantised" in row["reason"]


def test_the_rule_verdict_turns_and_keeps_its_own_reasons():
    rule = {
        "verdict": GOOD_ENOUGH,
        "reasons": ["input tokens: within tolerance"],
        "basis": "rule on condition divergence",
    }
    rows = served_precision_rows("bf16", [LLAMA, SILENT])
    turned = with_served_precision(rule, rows)
    assert turned is not None and turned["verdict"] == RE_MEASURE and turned["basis"] == rule["basis"]
    assert (
        turned["reasons"][0].startswith("gemma-local: serves Q4_K - Medium")
        and turned["reasons"][1:] == rule["reasons"]
    )
    assert with_served_precision(rule, served_precision_rows("bf16", [SILENT])) is rule
    assert with_served_precision(None, rows) is None


def test_the_measured_verdict_turns_only_the_candidate_serving_a_different_model():
    measured = {
        "verdict": GOOD_ENOUGH,
        "reasons": ["every claim reproduces at the vendor's conditions ..."],
        "basis": "measured",
        "candidates": [
            {"candidate": "gemma-local", "verdict": GOOD_ENOUGH, "reasons": []},
            {"candidate": "hosted", "verdict": GOOD_ENOUGH, "reasons": []},
        ],
    }
    turned = with_served_precision(measured, served_precision_rows("bf16", [LLAMA, SILENT]))
    assert turned is not None and turned["verdict"] == RE_MEASURE
    local, hosted = turned["candidates"]
    assert local["verdict"] == RE_MEASURE and local["reasons"][0].startswith("serves Q4_K - Medium")
    assert hosted == measured["candidates"][1]


def test_the_conditions_rows_stand_beside_the_claims_precision():
    rows = condition_rows("bf16", served_precision_rows("bf16", [LLAMA, SILENT]))
    assert rows == [
        {
            "axis": "precision served by gemma-local (measured: llama.cpp /props)",
            "claimed": "bf16",
            "production": "Q4_K - Medium (q4_k_m, 4-bit weights)",
        },
        {
            "axis": "precision served by hosted (measured: not said by its server)",
            "claimed": "bf16",
            "production": None,
        },
    ]


def test_verify_derives_the_turned_verdict_again_from_the_packs_fingerprints():
    vendor = {
        "candidate": "gemma-local",
        "metric": "output_tokens_per_s",
        "basis": metrics.VENDOR_CONDITIONS,
        "claimed": 100.0,
        "measured": 104.0,
        "verdict": "holds",
    }
    spec = SimpleNamespace(
        claim=SimpleNamespace(conditions=SimpleNamespace(precision="bf16")),
        workload=SimpleNamespace(proxy_tolerance=SimpleNamespace(capacity_ratio=1.25)),
    )
    measured = measured_proxy_verdict([vendor], [], 1.25)
    assert measured is not None and measured["verdict"] == GOOD_ENOUGH
    turned = with_served_precision(measured, served_precision_rows("bf16", [LLAMA]))
    pack = {"figures": [vendor], "headline_waterfall": [], "proxy_verdict": turned, "endpoint_fingerprints": [LLAMA]}
    result = Verification()
    _rederive_summary(pack, spec, result)
    assert result.problems == []
    _rederive_summary({**pack, "proxy_verdict": measured}, spec, result)  # the precision reason edited away
    assert result.problems == ["proxy_verdict: differs from the verdict derived from the figures again"]
