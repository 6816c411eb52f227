"""The metric catalogue's bill-check entries (`catalogue.py` appends them): **billed vs counted
tokens** — the server's `usage` counts against the candidate's own tokenizer count of what was
sent and received (template overhead measured once); their ratio is a figure.

Computed by sql/bill_check.sql and appended to the throughput table
(`pipeline/analysis/tabulate/bill_check.py`); judged at the production load only. A ratio above 1 bills
more than was counted, so lower is better for a verdict against a claim; the bill's own verdict
(`bill_verdict`: over-billed, under-billed, within tolerance, inconclusive, or not a bill verdict
when the counter is approximate) is a column beside them.
"""

from __future__ import annotations

from pipeline.analysis.declare.catalogue_model import BATCH_MEANS, PRODUCTION_LOAD, Metric, Source

RATIO_INTERVAL = BATCH_MEANS + " (ratio estimator)"


def _bill_ratio(name: str, display: str, definition: str) -> Metric:
    return Metric(
        name=name,
        unit="ratio",
        larger_is_better=False,
        kind="cost",
        sources={
            PRODUCTION_LOAD: Source(
                "throughput", name, f"{name}_ci_low", f"{name}_ci_high", "bill_requests", "rate_interval_method"
            )
        },
        interval=RATIO_INTERVAL,
        display=display,
        definition=definition,
    )


BILL_CHECK = (
    _bill_ratio(
        "billed_to_counted_prompt_tokens",
        "Billed / counted prompt tokens",
        "the server's usage.prompt_tokens / the client's count of the prompts sent (the plan's tokenizer, the chat "
        "template's overhead measured once), summed over the successful steady-window requests that reported usage",
    ),
    _bill_ratio(
        "billed_to_counted_output_tokens",
        "Billed / counted output tokens",
        "the server's usage.completion_tokens / the client's count of the replies received (the plan's tokenizer "
        "where local, else loadproof-approx), over the same requests",
    ),
    _bill_ratio(
        "billed_to_counted_cost",
        "Billed / counted token cost",
        "the token cost of the billed counts / the token cost of the counted ones, at the candidate's token prices "
        "(none when priced by the hour), over the same requests",
    ),
)
