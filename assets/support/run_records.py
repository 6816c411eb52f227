"""What Dagster's event log says about a run: its check evaluations and its materialisations.

The evidence pack lists them (`data_quality`, `lineage`), so a reader sees which checks guarded
the figures and which assets produced them.
"""

from dagster import AssetKey, DagsterEventType

from pipeline.contracts import REPLAY_PLAN


def data_quality(context, run_id: str | None = None) -> list[dict]:
    """Every asset check evaluated so far in this run (or in `run_id`: the run that measured, for a
    pack re-materialised on its files) before the asset being materialised: what was checked and
    whether it passed (the asset's own checks run after it, so they are never its data quality)."""
    own = context.asset_key.to_user_string()
    return [row for row in check_results_of_run(context, run_id or context.run_id) if row["asset"] != own]


def plan_run_id(context) -> str | None:
    """The run that last planned the replay (materialised the shared log-to-plan assets)."""
    event = context.instance.get_latest_materialization_event(AssetKey(REPLAY_PLAN.name))
    return None if event is None else event.run_id


def shared_inputs_quality(context, evaluated: list[dict], run_id: str | None = None) -> list[dict]:
    """The checks of the shared inputs (log to plan) from the run that last planned, when this
    partition's run did not materialise them itself (a later candidate of the same CLI run)."""
    event = context.instance.get_latest_materialization_event(AssetKey(REPLAY_PLAN.name))
    if event is None or event.run_id in (context.run_id, run_id):
        return []
    graph = context.job_def.asset_layer.asset_graph
    unpartitioned = {
        key.to_user_string() for key in graph.get_all_asset_keys() if graph.get(key).partitions_def is None
    }
    assets_here = {row["asset"] for row in evaluated}
    shared = [row for row in check_results_of_run(context, event.run_id) if row["asset"] in unpartitioned - assets_here]
    return [{**row, "run_id": event.run_id} for row in shared]


def check_results_of_run(context, run_id: str) -> list[dict]:
    """Each check evaluated in `run_id`: asset, check, passed, severity, and a failed one's
    explanation (what failed, how many rows, example ids, what to do)."""
    records = context.instance.get_records_for_run(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records
    results = []
    for record in records:
        evaluation = record.event_log_entry.dagster_event.event_specific_data
        row = {
            "asset": evaluation.asset_key.to_user_string(),
            "check": evaluation.check_name,
            "passed": evaluation.passed,
            "severity": "blocking" if evaluation.blocking else evaluation.severity.value.lower(),
        }
        explanation = evaluation.metadata.get("explanation")
        if not evaluation.passed and explanation is not None:
            row["explanation"] = str(explanation.value).splitlines()  # what failed, in the pack too
        results.append(row)
    return results


def materialised_assets(context, run_id: str | None = None) -> list[str]:
    """The assets this run (or `run_id`) has materialised so far: the pack's upstream lineage in the UI."""
    records = context.instance.get_records_for_run(
        run_id or context.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION
    ).records
    return sorted({record.event_log_entry.dagster_event.asset_key.to_user_string() for record in records})
