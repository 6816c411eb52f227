"""The precision each candidate serves, measured, beside the claim's and the spec's production
precision, and what it does to the proxy verdict.

The claim names the precision its benchmark ran at (`claim.conditions.precision`), the spec the
one production runs (`workload.production.precision`); the endpoint fingerprint's `engine`
section says what the candidate actually serves, where its server says it (llama.cpp's `/props`,
SGLang's server info). Weights stored in fewer or more bits than the benchmark's are a different
model, whatever the name: a Q4_K_M candidate is not the bf16 model the vendor measured, so its
figures are no proxy for it and the verdict says "must be re-measured", with the reason in words.
Same bits under different names (bf16 and fp16) are not a different model here; an unknown side
(the claim names none, the server says nothing) decides nothing.

Plain data in, plain data out: the pack builds the verdict with it and `loadproof verify` derives
it again from the pack's own fingerprints.
"""

from __future__ import annotations

from pipeline.precision_names import Precision, describe, precision_of
from pipeline.workload.divergence import RE_MEASURE


def _served(engine: dict | None) -> Precision | None:
    if not engine or not engine.get("precision") or not engine.get("weight_bits"):
        return None
    return Precision(engine["precision"], int(engine["weight_bits"]))


def _reason(served_name: str, served: Precision, source: str, claimed_name: str, claimed: Precision) -> str:
    fewer = served.weight_bits < claimed.weight_bits
    return (
        f"serves {describe(served, served_name)}, read from {source}; the claim's benchmark ran at "
        f"{describe(claimed, claimed_name)}: "
        + (
            "a quantised candidate against a higher-precision benchmark is a different model"
            if fewer
            else "the benchmark measured a more heavily quantised model than this candidate serves"
        )
        + ", so the vendor's figures are no proxy for it"
    )


def served_precision_rows(claimed_name: str | None, fingerprints: list[dict]) -> list[dict]:
    """Per candidate fingerprinted: what it serves (`served`: the server's own name, `precision`,
    `weight_bits`, `source`; None where the server does not say), and whether that makes the
    claim's benchmark a different model (`different_model`, `reason`)."""
    claimed = precision_of(claimed_name)
    rows = []
    for document in fingerprints:
        engine = document.get("engine") or None
        served = _served(engine)
        different = bool(served and claimed and served.weight_bits != claimed.weight_bits)
        rows.append(
            {
                "candidate": document["candidate"],
                "source": engine.get("source") if engine else None,
                "served": engine.get("quantization") if engine else None,
                "precision": served.name if served else None,
                "weight_bits": served.weight_bits if served else None,
                "different_model": different,
                "reason": (
                    _reason(engine["quantization"] or served.name, served, engine["source"], claimed_name, claimed)
                    if different and served and claimed and engine and claimed_name
                    else None
                ),
            }
        )
    return rows


def condition_rows(claimed_name: str | None, rows: list[dict]) -> list[dict]:
    """The conditions table's rows: each candidate's served precision beside the claim's."""
    return [
        {
            "axis": f"precision served by {row['candidate']} (measured: {row['source'] or 'not said by its server'})",
            "claimed": claimed_name,
            "production": (
                describe(Precision(row["precision"], row["weight_bits"]), row["served"]) if row["precision"] else None
            ),
        }
        for row in rows
    ]


def with_served_precision(verdict: dict | None, rows: list[dict]) -> dict | None:
    """`verdict` (the rule's or the measured one) once each candidate's served precision is
    beside the claim's: a candidate serving a different model makes it "must be re-measured",
    its reason first; otherwise unchanged."""
    different = [row for row in rows if row["different_model"]]
    if verdict is None or not different:
        return verdict
    reasons = [f"{row['candidate']}: {row['reason']}" for row in different]
    out = {**verdict, "verdict": RE_MEASURE, "reasons": reasons + list(verdict["reasons"])}
    if "candidates" in verdict:
        by_candidate = {row["candidate"]: row for row in different}
        out["candidates"] = [
            {**entry, "verdict": RE_MEASURE, "reasons": [by_candidate[entry["candidate"]]["reason"], *entry["reasons"]]}
            if entry["candidate"] in by_candidate
            else entry
            for entry in verdict["candidates"]
        ]
    return out
