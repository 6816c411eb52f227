"""History: a candidate's figures at this model version beside the previous version's run."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.analysis.judge.figures import figure_key
from pipeline.pack.render.pages import JSON_NAME


def previous_version(versions_in_order: list[str], measured: set[str], current: str) -> str | None:
    """The version seen last before `current` (in the order versions were first seen) that has a
    pack; for a version seen before any measured one (or not in the order), None."""
    if current not in versions_in_order:
        return None
    earlier = versions_in_order[: versions_in_order.index(current)]
    return next((version for version in reversed(earlier) if version in measured), None)


def load_previous_pack(candidate_dir: Path, version: str | None) -> dict | None:
    path = candidate_dir / version / JSON_NAME if version else None
    return json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else None


def compare(current: dict, previous: dict | None, previous_version_key: str | None) -> dict:
    """Figure deltas (current − previous) for every figure both packs measured, verdict changes,
    and whether the endpoint fingerprint changed."""
    if previous is None:
        return {"previous_model_version": None, "previous_run_id": None, "rows": [], "fingerprint_changed": None}
    before = {figure_key(f): f for f in previous.get("figures", [])}
    rows = []
    for figure in current["figures"]:
        old = before.get(figure_key(figure))
        if old is None:
            continue
        rows.append(
            {
                "candidate": figure["candidate"],
                "metric": figure["metric"],
                "unit": figure["unit"],
                "claimed": figure["claimed"],
                "previous": old["measured"],
                "current": figure["measured"],
                "delta": _delta(figure["measured"], old["measured"]),
                "relative_change": _relative(figure["measured"], old["measured"]),
                "previous_verdict": old["verdict"],
                "current_verdict": figure["verdict"],
                "verdict_changed": old["verdict"] != figure["verdict"],
            }
        )
    return {
        "previous_model_version": previous_version_key,
        "previous_run_id": previous.get("run_id"),
        "rows": rows,
        "fingerprint_changed": _fingerprints(current) != _fingerprints(previous),
    }


def _delta(now: float | None, before: float | None) -> float | None:
    return None if now is None or before is None else now - before


def _relative(now: float | None, before: float | None) -> float | None:
    return None if now is None or not before else (now - before) / abs(before)


def _fingerprints(pack: dict) -> list[str]:
    return sorted(d.get("fingerprint_sha256", "") for d in pack.get("endpoint_fingerprints", []))
