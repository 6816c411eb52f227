"""The bill checked: billed vs counted tokens, per candidate (sql/bill_check.sql).

**Billed vs counted tokens** — the server's `usage` counts against the candidate's own tokenizer
count of what was sent and received (template overhead measured once); their ratio is a figure.
The counted side is the client's: the plan's prompt fit under `workload.prompts.tokenizer` (a real
tokenizer's count carries the chat template's overhead, measured once before the plan) and the
streamed reply under the same tokenizer where it is a local one (`hf:`, `gguf:`), else under
`loadproof-approx`.

The ratios are always reported; they are a *bill verdict* only when the counter is the candidate's
own tokenizer (`counter_exact`): the candidate names its tokenizer (`candidates[].tokenizer`) and
the plan counted under that very setting. `loadproof-approx` is the reference endpoint's own
tokenizer, so a reference candidate that says so is checked exactly; any other pairing (an
approximate count against a real model, or a tokenizer the candidate does not claim) reports the
figure marked "not a bill verdict". Two settings never give a verdict: `server:` (the prompt is
the server's own count, the reply is counted approximately: the replay makes no HTTP call to count)
and a `completions` candidate (its prompt is plain text without the chat template the plan's
count includes). Beyond `BILL_TOLERANCE` (1 %), judged on the ratios' intervals, the difference
is flagged: over-billed or under-billed.

The columns are appended to the throughput table (as reply_mix's are), where the figures
`billed_to_counted_prompt_tokens`, `billed_to_counted_output_tokens` and `billed_to_counted_cost`
are read (the metric catalogue, `catalogue_bill.py`).
"""

from __future__ import annotations

import pyarrow as pa

from pipeline.analysis.statistics.intervals import with_candidate_columns
from pipeline.duck.session import QuerySession
from pipeline.spec import Spec

BILL_TOLERANCE = 0.01  # a bill differing from the count by more than this fraction is flagged

BILL_BASIS_SCHEMA = pa.schema(
    [
        ("candidate", pa.string()),
        ("counter", pa.string()),
        ("counter_exact", pa.bool_()),
        ("usd_per_million_input_tokens", pa.float64()),
        ("usd_per_million_output_tokens", pa.float64()),
    ]
)

# sql/bill_check.sql's columns, appended to the throughput table (its candidate aside)
BILL_CHECK_COLUMNS = (
    "bill_requests",
    "bill_counter",
    "bill_counter_exact",
    "prompt_tokens_billed",
    "prompt_tokens_counted",
    "output_tokens_billed",
    "output_tokens_counted",
    "bill_cost_billed_usd",
    "bill_cost_counted_usd",
    "billed_to_counted_prompt_tokens",
    "billed_to_counted_prompt_tokens_ci_low",
    "billed_to_counted_prompt_tokens_ci_high",
    "billed_to_counted_output_tokens",
    "billed_to_counted_output_tokens_ci_low",
    "billed_to_counted_output_tokens_ci_high",
    "billed_to_counted_cost",
    "billed_to_counted_cost_ci_low",
    "billed_to_counted_cost_ci_high",
    "bill_tolerance",
    "bill_verdict",
)


def counter_is_candidates_own(counter: str, candidate_tokenizer: str | None, api: str) -> bool:
    """Whether the plan's tokenizer setting counts as the candidate's own (module docstring)."""
    if candidate_tokenizer is None or candidate_tokenizer != counter or api == "completions":
        return False
    return not counter.startswith("server")


def bill_basis(spec: Spec) -> pa.Table:
    """Per candidate: the counter (the plan's tokenizer setting), whether it is the candidate's own,
    and its token prices (NULL when priced by the hour)."""
    counter = spec.workload.prompts.tokenizer
    return pa.Table.from_pylist(
        [
            {
                "candidate": c.name,
                "counter": counter,
                "counter_exact": counter_is_candidates_own(counter, c.tokenizer, c.api),
                "usd_per_million_input_tokens": c.price.usd_per_million_input_tokens,
                "usd_per_million_output_tokens": c.price.usd_per_million_output_tokens,
            }
            for c in spec.candidates
        ],
        schema=BILL_BASIS_SCHEMA,
    )


def bind_bill_basis(session: QuerySession, spec: Spec) -> QuerySession:
    """The session with `bill_basis` bound and the tolerance among its parameters."""
    session.bind("bill_basis", bill_basis(spec))
    session.params["bill_tolerance"] = BILL_TOLERANCE
    return session


def with_bill_check(session: QuerySession, table: pa.Table) -> pa.Table:
    """The throughput rows with the bill check's columns (sql/bill_check.sql), per candidate; NULL
    for a candidate with no successful steady-window request that reported usage. A pack whose own
    older `steady_requests` query lacks the counts (`loadproof verify`) keeps its table as it was."""
    if not session.queries.reads("steady_requests", "prompt_tokens_billed"):
        return table
    return with_candidate_columns(table, session.run("bill_check"), BILL_CHECK_COLUMNS)
