"""Data-quality rules as plain functions: each returns (passed, metadata) for an asset check.

The Dagster checks in assets/ call these; tests feed them crafted bad tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.hashing import sha256_file

ORDER_TOLERANCE = 1e-9


@dataclass
class Outcome:
    passed: bool
    metadata: dict = field(default_factory=dict)


def reject_rate_within_budget(accepted: int, rejected: int, budget: float) -> Outcome:
    total = accepted + rejected
    rate = rejected / total if total else 1.0
    return Outcome(accepted > 0 and rate <= budget, {"reject_rate": rate, "budget": budget, "rejected": rejected, "accepted": accepted})


def sample_within_window(sample: pa.Table, window_s: float) -> Outcome:
    offsets = sample.column("window_offset_s")
    if sample.num_rows == 0:
        return Outcome(False, {"rows": 0, "problem": "empty sample"})
    low, high = pc.min(offsets).as_py(), pc.max(offsets).as_py()
    return Outcome(low >= 0 and high < window_s, {"rows": sample.num_rows, "min_offset_s": low, "max_offset_s": high})


def quantiles_ordered(profile: dict) -> Outcome:
    bad = [
        kind
        for kind in ("prompt_tokens", "output_tokens")
        if not profile[f"{kind}_p50"] <= profile[f"{kind}_p90"] <= profile[f"{kind}_p99"] <= profile[f"{kind}_max"]
    ]
    rate_ok = (profile.get("arrival_rate_per_s") or 0) > 0 or profile["requests"] == 1
    return Outcome(not bad and rate_ok, {"unordered": ", ".join(bad) or "none", "arrival_rate_per_s": profile.get("arrival_rate_per_s")})


def plan_well_formed(plan: pa.Table) -> Outcome:
    ids = plan.column("request_id")
    duplicates = plan.num_rows - pc.count_distinct(ids).as_py()
    offsets = [o for o in plan.column("scheduled_offset_s").to_pylist() if o is not None]
    decreasing = sum(1 for a, b in zip(offsets, offsets[1:]) if b < a)
    non_positive = pc.sum(pc.less(plan.column("max_tokens"), 1)).as_py() or 0
    return Outcome(
        plan.num_rows > 0 and duplicates == 0 and decreasing == 0 and non_positive == 0,
        {"rows": plan.num_rows, "duplicate_ids": duplicates, "decreasing_offsets": decreasing, "max_tokens_below_1": non_positive},
    )


def one_row_per_planned_request(plan: pa.Table, timings: pa.Table, candidates: list[str]) -> Outcome:
    planned = set(plan.column("request_id").to_pylist())
    problems = {}
    for candidate in candidates:
        ids = pc.filter(timings.column("request_id"), pc.equal(timings.column("candidate"), candidate)).to_pylist()
        missing, extra = len(planned - set(ids)), len(set(ids) - planned)
        duplicated = len(ids) - len(set(ids))
        if missing or extra or duplicated:
            problems[candidate] = f"missing {missing}, unplanned {extra}, duplicated {duplicated}"
    return Outcome(not problems, {"planned": len(planned), "rows": timings.num_rows, "problems": str(problems or "none")})


def lifecycle_ordered(timings: pa.Table) -> Outcome:
    """send ≤ first byte ≤ first token ≤ last token ≤ end, TTFT ≤ E2E, nothing negative."""
    rows = timings.select(
        ["t_sent_ns", "t_first_byte_ns", "t_first_token_ns", "t_last_token_ns", "t_end_ns", "ttft_ms", "e2e_ms", "tpot_ms"]
    ).to_pylist()
    violations = 0
    for row in rows:
        stamps = [row[k] for k in ("t_sent_ns", "t_first_byte_ns", "t_first_token_ns", "t_last_token_ns", "t_end_ns") if row[k] is not None]
        ordered = all(a <= b for a, b in zip(stamps, stamps[1:]))
        durations_ok = all(row[k] is None or row[k] >= 0 for k in ("ttft_ms", "e2e_ms", "tpot_ms"))
        ttft_ok = row["ttft_ms"] is None or row["e2e_ms"] is None or row["ttft_ms"] <= row["e2e_ms"]
        violations += not (ordered and durations_ok and ttft_ok)
    return Outcome(violations == 0, {"rows": len(rows), "violations": violations})


def percentiles_ordered(latency: pa.Table) -> Outcome:
    by_series: dict[tuple, list] = {}
    for row in latency.to_pylist():
        by_series.setdefault((row["candidate"], row["metric"], row.get("scope") or "all"), []).append(row)
    unordered = []
    for key, rows in by_series.items():
        rows.sort(key=lambda r: r["q"])
        values = [r["value"] for r in rows]
        in_interval = all(
            (r["ci_low"] is None or r["ci_low"] <= r["value"]) and (r["ci_high"] is None or r["value"] <= r["ci_high"]) for r in rows
        )
        if any(b < a - ORDER_TOLERANCE for a, b in zip(values, values[1:])) or not in_interval:
            unordered.append("/".join(key))
    return Outcome(latency.num_rows > 0 and not unordered, {"series": len(by_series), "unordered": ", ".join(unordered) or "none"})


def throughput_consistent(throughput: pa.Table) -> Outcome:
    problems = []
    for row in throughput.to_pylist():
        name = row["candidate"]
        rates = [row[k] for k in ("output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_requests_per_s")]
        if any(r is None or r != r or r < 0 for r in rates):
            problems.append(f"{name}: missing, NaN or negative rate")
            continue
        if row["goodput_requests_per_s"] > row["requests_per_s"] + ORDER_TOLERANCE:
            problems.append(f"{name}: goodput above requests/s")
        if abs(row["output_tokens_per_s"] * row["window_s"] - row["output_tokens"]) > 1e-6 * max(1, row["output_tokens"]):
            problems.append(f"{name}: output tokens/s × window ≠ token sum")
    return Outcome(throughput.num_rows > 0 and not problems, {"problems": "; ".join(problems) or "none"})


def cost_non_negative(cost: pa.Table) -> Outcome:
    bad = [row["candidate"] for row in cost.to_pylist() if row["cost_usd"] is None or row["cost_usd"] < 0]
    return Outcome(cost.num_rows > 0 and not bad, {"bad_candidates": ", ".join(bad) or "none"})


def lineage_hashes_match(pack: dict, pack_dir: Path) -> Outcome:
    """Every file a figure names exists in the pack with the sha256 the figure recorded."""
    refs = {}
    for figure in pack["figures"]:
        lineage = figure["lineage"]
        refs[lineage["sql"]] = lineage["sql_sha256"]
        for ref in lineage["inputs"] + lineage["staged_sql"]:
            refs[ref["path"]] = ref["sha256"]
    mismatched = [path for path, digest in refs.items() if not (pack_dir / path).is_file() or sha256_file(pack_dir / path) != digest]
    return Outcome(bool(refs) and not mismatched, {"files": len(refs), "mismatched": ", ".join(mismatched) or "none"})


def claims_accounted_for(pack: dict) -> Outcome:
    """Every claimed figure has, for every candidate, a measured value or a stated reason."""
    candidates = sorted({figure["candidate"] for figure in pack["figures"]})
    found = {(f["candidate"], f["metric"]): f for f in pack["figures"]}
    missing = [
        f"{candidate}/{metric}"
        for metric in pack["claim"]["figures"]
        for candidate in candidates
        if (figure := found.get((candidate, metric))) is None or (figure["measured"] is None and not figure.get("reason"))
    ]
    return Outcome(bool(candidates) and not missing, {"claims": len(pack["claim"]["figures"]), "unaccounted": ", ".join(missing) or "none"})


def sweep_summary_consistent(levels: list[dict], summary: list[dict]) -> Outcome:
    """Per candidate: every level up to the highest SLA-meeting one met the SLA, and the first
    missing level (if any) lies above it and did not meet it."""
    problems = []
    for row in summary:
        mine = [level for level in levels if level["candidate"] == row["candidate"]]
        chosen, first_miss = row["max_sla_load_level"], row["first_missing_load_level"]
        if chosen is not None and not all(level["meets_sla"] for level in mine if level["load_level"] <= chosen):
            problems.append(f"{row['candidate']}: a level at or below {chosen} missed the SLA")
        if first_miss is not None:
            missed = [level for level in mine if level["load_level"] == first_miss]
            if not missed or missed[0]["meets_sla"] or (chosen is not None and first_miss <= chosen):
                problems.append(f"{row['candidate']}: first missing level {first_miss} inconsistent")
    return Outcome(not problems, {"candidates": len(summary), "problems": "; ".join(problems) or "none"})


def sweep_levels_complete(levels: list[dict], candidates: list[str], sweeping: bool) -> Outcome:
    """One row per candidate and measured level, the production level among them, proportions
    within [0, 1] (no rows at all when no sweep ran)."""
    if not sweeping:
        return Outcome(not levels, {"rows": len(levels)})
    keys = [(row["candidate"], row["load_level"]) for row in levels]
    problems = []
    if len(keys) != len(set(keys)):
        problems.append("a candidate × level appears twice")
    for candidate in candidates:
        if not any(row["candidate"] == candidate and row["production"] for row in levels):
            problems.append(f"{candidate}: no production level")
    for row in levels:
        for name in ("sla_attainment", "error_rate"):
            if row[name] is not None and not 0 <= row[name] <= 1:
                problems.append(f"{row['candidate']} at {row['load_level_label']}: {name} {row[name]}")
    return Outcome(not problems, {"rows": len(levels), "problems": "; ".join(problems) or "none"})
