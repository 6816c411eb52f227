"""A small buyer's replay plan for the arm tests: six requests two seconds apart, one session; and
the runs the arm tests send against the reference endpoint."""

from __future__ import annotations

from pathlib import Path

from pipeline.analysis.judge.figures import vendor_conditions_figures, vendor_conditions_rows
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import RunBuilder
from pipeline.replay.recording.records import PlannedRequest


def reference_arm_runs(base_url: str, run_id: str, folder: Path) -> RunBuilder:
    """Arms against the reference endpoint at `base_url` (candidate `ref`), each journalled in `folder`."""
    target = Target("ref", base_url, "reference-model")
    return RunBuilder(target, ReplaySettings(request_timeout_s=10), run_id, lambda name: folder / f"{name}.jsonl")


def buyer_plan() -> list[PlannedRequest]:
    """Six requests two seconds apart; the third follows the first (a session's second turn)."""
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]
    plan = [
        PlannedRequest(f"q{i}", 2.0 * i, messages, 10 + i, 20 + i, min_tokens=10 + i, think_time_s=None)
        for i in range(6)
    ]
    plan[2] = PlannedRequest("q2", 4.0, messages, 12, 22, min_tokens=12, follows_request_id="q0", think_time_s=3.0)
    return plan


def judged_at_vendor_conditions(spec, arm_rows: list[dict]) -> list[dict]:
    """The analysis's figures at basis vendor_conditions from an arm's rows (what the pack's
    vendor_conditions section reads its verdicts from)."""
    return vendor_conditions_figures(spec, vendor_conditions_rows(spec, arm_rows))
