"""Spec builders: the demo spec (or demo-real's) pointed at the bundled log and slice, a small one-candidate spec
for whole-graph runs, a serving-profile file for the reference endpoint, the asset list."""

from __future__ import annotations

from pathlib import Path

import yaml

from pipeline import REPO_ROOT
from pipeline.reference import load_profile

DEMO_LOG = REPO_ROOT / "examples" / "data" / "production_requests.jsonl"


DEMO_SPEC = REPO_ROOT / "examples" / "demo.yaml"
DEMO_REAL_SPEC = REPO_ROOT / "examples" / "demo_real.yaml"  # `loadproof demo-real`: llama-server


DEMO_SLICE = REPO_ROOT / "examples" / "data" / "banking77_slice.csv"


def demo_spec_dict(spec: Path = DEMO_SPEC) -> dict:
    """The spec's data with its log and labelled slice as absolute paths (relative to the spec)."""
    data = yaml.safe_load(spec.read_text())
    data["workload"]["log"]["path"] = str(spec.parent / data["workload"]["log"]["path"])
    if data.get("accuracy"):
        data["accuracy"]["path"] = str(spec.parent / data["accuracy"]["path"])
    return data


ASSETS = [
    "production_logs",
    "production_sample",
    "prompt_profile",
    "endpoint_fingerprint",
    "replay_plan",
    "client_calibration",
    "raw_timings",
    "latency_percentiles",
    "throughput",
    "throughput_buckets",
    "error_breakdown",
    "cost_per_decision",
    "labelled_slice",
    "accuracy_results",
    "accuracy_summary",
    "accuracy_by_label",
    "sweep_timings",
    "sweep_levels",
    "sweep_summary",
    "arm_timings",
    "arm_figures",
    "capacity",
    "token_agreement",
    "prefix_cache_hits",
    "server_timings",
    "server_ttft",
    "server_levels",
    "gpu_energy",
    "figures",
    "evidence_pack",
    "candidate_comparison",
]


def small_spec(write_spec, base_url: str, **workload) -> Path:
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["base_url"] = base_url
    data["workload"]["sample"].update(window_s=8)
    data["workload"]["replay"].update(warmup_s=1, cooldown_s=1, max_duration_s=60)
    data["workload"].update(workload)
    return write_spec(data)


def profile_file(tmp_path: Path, version: str, seed: int = 0) -> str:
    data = load_profile("zero").model_dump()
    data.update(version=version, seed=seed)
    path = tmp_path / f"profile-{version}-{seed}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)
