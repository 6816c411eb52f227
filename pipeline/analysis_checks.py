"""Check rules for the analysis and accuracy tables, as plain functions (see pipeline/checks.py)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.checks import ORDER_TOLERANCE, Outcome


def production_requests(timings: pa.Table) -> pa.Table:
    """The raw timings the load figures count: every row but the labelled items mixed into the
    load (accuracy mode `mixed`, scored in accuracy_results instead)."""
    if "labelled_item_id" not in timings.schema.names:
        return timings
    return timings.filter(pc.is_null(timings.column("labelled_item_id")))


def slice_well_formed(slice_table: pa.Table, configured: bool) -> Outcome:
    """A configured slice has items, unique ids and a label on each item."""
    if not configured:
        return Outcome(slice_table.num_rows == 0, {"configured": False})
    ids = slice_table.column("item_id").to_pylist()
    labels = slice_table.column("label").to_pylist()
    duplicates = len(ids) - len(set(ids))
    unlabelled = sum(1 for label in labels if not label)
    return Outcome(
        bool(ids) and duplicates == 0 and unlabelled == 0,
        {"items": len(ids), "labels": len(set(labels)), "duplicate_ids": duplicates, "unlabelled": unlabelled},
    )


def one_result_per_item(slice_table: pa.Table, results: pa.Table, candidates: list[str]) -> Outcome:
    """Every candidate answered (or failed on) every item of the slice exactly once."""
    items = set(slice_table.column("item_id").to_pylist())
    problems = {}
    pairs = list(zip(results.column("candidate").to_pylist(), results.column("item_id").to_pylist()))
    for candidate in candidates if items else []:
        got = [item for name, item in pairs if name == candidate]
        missing, duplicated = len(items - set(got)), len(got) - len(set(got))
        if missing or duplicated:
            problems[candidate] = f"missing {missing}, duplicated {duplicated}"
    return Outcome(not problems, {"items": len(items), "rows": results.num_rows, "problems": str(problems or "none")})


def proportions_in_bounds(table: pa.Table, name: str) -> Outcome:
    """0 ≤ ci_low ≤ value ≤ ci_high ≤ 1 for a proportion column and its Wilson interval."""
    bad = 0
    for row in table.to_pylist():
        value, low, high = row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"]
        if value is None:
            continue
        if not (0 <= low <= value + ORDER_TOLERANCE and value <= high + ORDER_TOLERANCE and high <= 1):
            bad += 1
    return Outcome(bad == 0, {"rows": table.num_rows, "out_of_bounds": bad})


def buckets_add_up(buckets: pa.Table, timings_ended: dict[str, int]) -> Outcome:
    """Every request that ended is counted in exactly one 1-second bucket of its candidate."""
    counted: dict[str, int] = {}
    for row in buckets.to_pylist():
        counted[row["candidate"]] = counted.get(row["candidate"], 0) + row["requests_ok"] + row["requests_failed"]
    mismatched = {c: (counted.get(c, 0), n) for c, n in timings_ended.items() if counted.get(c, 0) != n}
    return Outcome(buckets.num_rows > 0 and not mismatched, {"buckets": buckets.num_rows, "mismatched": str(mismatched or "none")})


def error_rates_sum_to_one(errors: pa.Table) -> Outcome:
    totals: dict[str, float] = {}
    for row in errors.to_pylist():
        totals[row["candidate"]] = totals.get(row["candidate"], 0.0) + row["rate"]
    off = {c: t for c, t in totals.items() if abs(t - 1.0) > 1e-9}
    return Outcome(errors.num_rows > 0 and not off, {"candidates": len(totals), "not_summing_to_one": str(off or "none")})
