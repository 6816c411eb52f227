"""The revalidation job's steps on a Dask cluster, with dynamic fan-out.

dagster-dask's own `dask_executor` submits the plan level by level as it stands before the run,
so the steps a `DynamicOut` maps at run time (the `replay_shard` steps of `raw_timings`) never
run (dagster issue 9785, open). This executor keeps dagster-dask's worker entry point
(`query_on_dask_worker`: rebuild the job in the worker, execute one step) and drives it with
Dagster's own `ActiveExecution`, as the multiprocess and celery executors do: a step is submitted
when its inputs exist, with the known state (dynamic mappings included) that lets the worker
resolve a mapped step. Each step is one Dask task; the cluster is an existing scheduler
(`address`) or a `LocalCluster` of worker processes (one thread each: Dagster is not
thread-safe) started for the run.
"""

from __future__ import annotations

import sys
import time

from dagster import Field, Int, StringSource, executor, multiple_process_executor_requirements
from dagster import _check as check
from dagster._core.errors import DagsterSubprocessError
from dagster._core.events import DagsterEvent, EngineEventData
from dagster._core.execution.context.system import PlanOrchestrationContext
from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._core.execution.retries import RetryMode
from dagster._core.executor.base import Executor
from dagster._utils.error import serializable_error_info_from_exc_info

POLL_S = 0.2  # how long the loop waits for a finished step before it looks for new ones
DELEGATE_MARKER = "dask_step"


@executor(
    name="loadproof_dask",
    requirements=multiple_process_executor_requirements(),
    config_schema={
        "address": Field(StringSource, is_required=False, description="an existing scheduler (tcp://host:8786)"),
        "n_workers": Field(Int, default_value=2, description="without an address: the local cluster's workers"),
    },
)
def dask_step_executor(init_context):
    config = init_context.executor_config
    return DaskStepExecutor(config.get("address"), config["n_workers"])


class DaskStepExecutor(Executor):
    def __init__(self, address: str | None, n_workers: int):
        self.address, self.n_workers = address, n_workers

    @property
    def retries(self) -> RetryMode:
        return RetryMode.DISABLED

    def _cluster(self):
        if self.address:
            return self.address
        from distributed import LocalCluster

        return LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True, dashboard_address=None)

    def execute(self, plan_context: PlanOrchestrationContext, execution_plan: ExecutionPlan):
        check.invariant(plan_context.instance.is_persistent, "Dask execution needs a persistent DagsterInstance")
        from dagster_dask.executor import query_on_dask_worker
        from distributed import Client, wait

        instance, run = plan_context.instance, plan_context.dagster_run
        cluster = self._cluster()
        yield DagsterEvent.engine_event(
            plan_context, f"Dask cluster: {getattr(cluster, 'scheduler_address', cluster)}", EngineEventData()
        )
        with Client(cluster) as client, InstanceConcurrencyContext(instance, run) as concurrency:
            with execution_plan.start(retry_mode=self.retries, instance_concurrency_context=concurrency) as active:
                futures: dict = {}  # step key → the Dask future running it
                errors: dict = {}
                stopping = False
                while (not active.is_complete and not stopping) or futures:
                    if active.check_for_interrupts():
                        yield DagsterEvent.engine_event(
                            plan_context, "Dask executor: interrupted, cancelling steps", EngineEventData()
                        )
                        stopping = True
                        active.mark_interrupted()
                        client.cancel(list(futures.values()))
                    for key in [key for key, future in futures.items() if future.done()]:
                        future = futures.pop(key)
                        try:
                            events = future.result()
                        except Exception:
                            events = []
                            errors[key] = serializable_error_info_from_exc_info(sys.exc_info())
                        for event in events:
                            yield event
                            active.handle_event(event)
                        active.verify_complete(plan_context, key)
                    yield from active.plan_events_iterator(plan_context)
                    if stopping or errors:
                        _wait_for_one(wait, futures)
                        continue
                    for step in active.get_steps_to_execute():
                        yield DagsterEvent.engine_event(
                            plan_context.for_step(step),
                            f'Submitting step "{step.key}" to the Dask cluster.',
                            EngineEventData(marker_start=DELEGATE_MARKER),
                        )
                        futures[step.key] = client.submit(
                            query_on_dask_worker,
                            [],
                            plan_context.reconstructable_job,
                            run,
                            plan_context.run_config,
                            [step.key],
                            instance.get_ref(),
                            active.get_known_state(),
                            key=f"{plan_context.job_name}.{run.run_id}.{step.key}",  # unique on a shared cluster
                            pure=False,
                        )
                    _wait_for_one(wait, futures)
        if cluster is not self.address:
            cluster.close()
        if errors:
            raise DagsterSubprocessError(
                "Steps failed in Dask workers:\n" + "\n".join(f"[{key}]: {e.to_string()}" for key, e in errors.items()),
                subprocess_error_infos=list(errors.values()),
            )


def _wait_for_one(wait, futures: dict) -> None:
    """Until one running step finishes, or POLL_S (then the loop looks for interrupts again)."""
    if not futures:
        time.sleep(POLL_S)  # steps waiting on something else (a concurrency slot): no busy loop
        return
    try:
        wait(list(futures.values()), timeout=POLL_S, return_when="FIRST_COMPLETED")
    except TimeoutError:
        pass
