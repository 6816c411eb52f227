"""Every claim accounted for (issue 31, item 7): a claimed figure that no run of the spec judges at
its basis — a capacity claim with no capacity search and no vendor arm, accuracy with no labelled
slice, goodput (read only at the production load, where it is served demand) — gets a figure of its
own: no value, *inconclusive* (with its tolerance, as every verdict), the reason, and the spec
setting that would judge it (`setting_to_judge`). Made with the figures' own `figure`, so the
verdict is made where every other is (`figures.judged`)."""

from __future__ import annotations

from pipeline.analysis.declare import metrics
from pipeline.analysis.declare.catalogue import CAPACITY_AT_SLA, PRODUCTION_LOAD, VENDOR_CONDITIONS
from pipeline.analysis.judge.figures import figure
from pipeline.spec import Spec

# what would judge a claim no configured run judges, by what the claim is about (`metrics.claim_kind`)
SWEEP_SETTING = "workload.replay.sweep"
ARMS_SETTING = "workload.replay.arms"
ACCURACY_SETTING = "accuracy"
VENDOR_BENCHMARK = (
    "the vendor's own benchmark (claim.conditions: input_tokens, output_tokens and a concurrency or request_rate, "
    "with workload.replay.arms)"
)


def unjudged_claims(spec: Spec, figures: list[dict]) -> list[dict]:
    """A figure for every claimed figure that no figure of `figures` judges, for each candidate
    `figures` hold (the partition's: never another candidate's): measured nothing, *inconclusive*,
    `setting_to_judge` naming the spec setting that would judge it. None with `claim.tolerance:
    null` (a pack written before tolerances)."""
    if spec.claim.tolerance is None:
        return []
    judged_ = {(f["candidate"], f["metric"]) for f in figures if f.get("verdict") is not None}
    out = []
    for candidate in dict.fromkeys(f["candidate"] for f in figures):  # the partition's (never another's)
        for name in spec.claim.figures:
            if (candidate, name) in judged_:
                continue
            entry, kind = metrics.metric(name), metrics.claim_kind(name)
            basis, setting, query = PRODUCTION_LOAD, None, "throughput"
            if kind == "capacity" and CAPACITY_AT_SLA in entry.bases:
                basis, setting, query = CAPACITY_AT_SLA, SWEEP_SETTING, "sweep_summary"
                reason = f"no capacity search ran: a capacity claim is judged at the capacity at the SLA ({setting})"
                if VENDOR_CONDITIONS in entry.bases:
                    reason += f" or at {VENDOR_BENCHMARK}"
            elif kind == "capacity" and VENDOR_CONDITIONS in entry.bases:
                basis, setting = VENDOR_CONDITIONS, ARMS_SETTING
                reason = f"the vendor's conditions were not run: this capacity claim is judged at {VENDOR_BENCHMARK}"
            elif kind == "capacity":
                basis = CAPACITY_AT_SLA
                reason = (
                    f"{entry.display} is measured only at the production load, where it is served demand: no setting "
                    "judges a capacity claim on it (claim output_tokens_per_s or requests_per_s instead)"
                )
            elif kind == "quality" and name == "accuracy":
                setting = ACCURACY_SETTING
                reason = (
                    f"no labelled slice was scored: the spec's `{setting}` section (a labelled slice) would judge it"
                )
            else:
                reason = "no run of the spec measured it"
            item = figure(spec, candidate, name, None, None, None, 0, query, basis)
            item["reason"] = reason
            if setting is not None:
                item["setting_to_judge"] = setting
            out.append(item)
    return out
