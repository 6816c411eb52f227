"""great-expectations (1.x) suites run on in-memory pandas batches, one per guarded table.

`validate(suite, frame, params, name)` runs one suite (pipeline.quality.expectations.runner); the suites,
and the `*_frame` functions that derive the columns a suite needs, live in one module per stage:
workload (log, sample), replay (plan, raw timings, endpoint health), tables (analysis tables),
accuracy, pack.
"""

from pipeline.quality.expectations.accuracy import (
    UNSCORABLE,
    accuracy_results_frame,
    accuracy_results_suite,
    labelled_slice_suite,
    proportion_suite,
)
from pipeline.quality.expectations.pack import claims_frame, claims_suite
from pipeline.quality.expectations.replay import (
    endpoint_health_suite,
    raw_timings_complete_suite,
    raw_timings_frame,
    raw_timings_suite,
    replay_plan_frame,
    replay_plan_suite,
)
from pipeline.quality.expectations.runner import FAILED_DETAIL_LIMIT, validate
from pipeline.quality.expectations.streams import stream_frame, stream_gaps_suite, stream_tokens_seen_suite
from pipeline.quality.expectations.tables import (
    cost_per_decision_suite,
    error_breakdown_frame,
    error_breakdown_suite,
    latency_percentiles_frame,
    latency_percentiles_suite,
    throughput_buckets_frame,
    throughput_buckets_suite,
    throughput_frame,
    throughput_suite,
)
from pipeline.quality.expectations.workload import (
    LOG_ORDER_MOSTLY,
    canonical_log_frame,
    canonical_log_suite,
    production_sample_suite,
    representativeness_suite,
)

__all__ = [
    "stream_frame",
    "stream_gaps_suite",
    "stream_tokens_seen_suite",
    "FAILED_DETAIL_LIMIT",
    "LOG_ORDER_MOSTLY",
    "UNSCORABLE",
    "accuracy_results_frame",
    "accuracy_results_suite",
    "canonical_log_frame",
    "canonical_log_suite",
    "claims_frame",
    "claims_suite",
    "cost_per_decision_suite",
    "endpoint_health_suite",
    "error_breakdown_frame",
    "error_breakdown_suite",
    "labelled_slice_suite",
    "latency_percentiles_frame",
    "latency_percentiles_suite",
    "production_sample_suite",
    "proportion_suite",
    "raw_timings_complete_suite",
    "raw_timings_frame",
    "raw_timings_suite",
    "replay_plan_frame",
    "replay_plan_suite",
    "representativeness_suite",
    "throughput_buckets_frame",
    "throughput_buckets_suite",
    "throughput_frame",
    "throughput_suite",
    "validate",
]
