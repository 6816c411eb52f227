"""`loadproof verify`'s part for the bill check: the pack's `bill_check` section re-made from the
throughput rows and figures re-computed from the raw timings (with the pack's own queries) and
compared key by key — the counter, the verdict, the token and cost sums, the ratios. The figures
themselves are compared with the other figures; the section holds what they do not (the verdict
word, the counter). A pack written before the bill check has no section to compare."""

from __future__ import annotations

from pipeline.analysis.judge.figures_table import same_value
from pipeline.pack.assemble.bill_check import bill_check_section


def recheck_bill_section(pack: dict, throughput_rows: list[dict], figures: list[dict]) -> list[str]:
    """The problems found, each naming the section, the candidate and the key."""
    if "bill_check" not in pack:
        return []
    packed = {row["candidate"]: row for row in pack["bill_check"]}
    fresh = {row["candidate"]: row for row in bill_check_section(throughput_rows, figures)}
    problems = [f"bill_check: {c}: not re-computable from the raw timings" for c in sorted(set(packed) - set(fresh))]
    problems += [f"bill_check: {c}: missing from the pack" for c in sorted(set(fresh) - set(packed))]
    for candidate in sorted(set(packed) & set(fresh)):
        stored, again = packed[candidate], fresh[candidate]
        for key in sorted(set(stored) | set(again)):
            if key == "figures":
                continue  # compared as figures
            if not same_value(stored.get(key), again.get(key)):
                problems.append(
                    f"bill_check: {candidate}: {key} in the pack {stored.get(key)!r}, re-computed {again.get(key)!r}"
                )
    return problems
