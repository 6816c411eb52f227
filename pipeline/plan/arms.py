"""What each arm sends: the vendor's own benchmark and the attribution ladder's steps.

The ladder walks from the vendor's conditions to the buyer's load one axis at a time, in this
order (the change at each step is attributed to the axis it adds, so the attribution depends on
the order: another order would split interactions between axes differently):

a. `a_vendor_conditions`: `claim.conditions` — prompts of `input_tokens` under the plan's
   tokenizer, `output_tokens` as max_tokens (and min_tokens with ignore_eos where the spec says the
   endpoint honours them, `workload.prompts.min_tokens`), closed loop at `concurrency`, or, when the
   claim gives a `request_rate` and no concurrency, an open loop at that rate (its
   `arrival_process`, Poisson when not said), `num_requests` of them (`vendor_request_count`);
b. `b_prompt_lengths`: the buyer's prompt lengths (the replay plan's client-counted lengths),
   synthetic text of those lengths, the vendor's output length, the same closed loop;
c. `c_output_lengths`: + the buyer's output lengths (the plan's max_tokens and min_tokens);
d. `d_request_structure`: + the buyer's requests themselves (the plan's messages: system prompts,
   prefix reuse, session turns carrying the conversation so far), still a closed loop (think times
   belong to the arrival process: 0 here), without their request fields (the vendor's benchmark
   sends none);
d2. `d2_request_settings`: + the buyer's tools, schemas and reasoning settings (the plan's
   `request_fields`: tools, tool_choice, response_format, sampling and reasoning controls, as the
   replay sends them); only where some of the buyer's requests carry any (else the step would
   repeat (d));
e. `e_arrival_process`: + the buyer's arrival process at the same mean load as the last closed-loop
   step ((d2), else (d)): an open loop at the plan's own offsets (and think times) re-scaled so that
   the mean rate equals that step's measured request rate (decided after it ran:
   `arrival_process_arm`).

A closed loop's arms are sized in waves of the claim's concurrency (the first wave is warm-up): the
vendor's arm `1 + arms.waves` waves (`vendor_request_count`: the claim's own `num_requests` is the
vendor's sample, not ours), each ladder step `1 + arms.ladder_waves` (`ladder_request_count`: b–e the
plan's first ones, or the plan over again when it is shorter). Where the spec sets
`arms.requests`, every arm sends that many (the vendor's bounded by the claim's `num_requests`); an
open loop's vendor arm sends the claim's `num_requests`, else `arms.requests`. The ladder runs only
from a closed loop (a claim with `concurrency`);
request ids are `<arm>-<n>`, so one arm's rows never mix with another's.

The API the arms speak (`pipeline/replay/transport/api_kinds.py`): (a), (b) and (c) the claim's own
(`claim.conditions.endpoint`: `completions` for a `vllm bench serve` run on its default backend)
where it says one, else the candidate's; from (d) on, the candidate's `api` — the buyer's requests
as the buyer's application sends them, so the API's change is part of the request-structure step.
"""

from __future__ import annotations

import dataclasses

from pipeline.plan.arrivals import synthetic
from pipeline.plan.synthetic_prompts import Tokenizer, fit_messages
from pipeline.replay.conditions.arms import ArmPlan
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec.arms import Arms
from pipeline.spec.claim import ClaimConditions

VENDOR_CONDITIONS = "a_vendor_conditions"
PROMPT_LENGTHS = "b_prompt_lengths"
OUTPUT_LENGTHS = "c_output_lengths"
REQUEST_STRUCTURE = "d_request_structure"
REQUEST_SETTINGS = "d2_request_settings"
ARRIVAL_PROCESS = "e_arrival_process"
# arm -> (the axis its step adds, a label for tables and charts), in ladder order
LADDER = {
    VENDOR_CONDITIONS: ("vendor conditions", "vendor's conditions"),
    PROMPT_LENGTHS: ("prompt lengths", "+ buyer's prompt lengths"),
    OUTPUT_LENGTHS: ("output lengths", "+ buyer's output lengths"),
    REQUEST_STRUCTURE: ("request structure", "+ buyer's requests (sessions, prefixes, system prompts)"),
    REQUEST_SETTINGS: ("request settings", "+ buyer's tools, schemas and reasoning settings"),
    ARRIVAL_PROCESS: ("arrival process", "+ buyer's arrivals at the same mean load"),
}


def runnable(conditions: ClaimConditions) -> bool:
    """The vendor's benchmark can be re-run only when the claim says its lengths and its load:
    a concurrency (a closed loop) or a request rate (an open loop)."""
    lengths = None not in (conditions.input_tokens, conditions.output_tokens)
    return lengths and (conditions.concurrency is not None or conditions.request_rate is not None)


def closed_loop(conditions: ClaimConditions) -> bool:
    """The vendor's benchmark as a closed loop (a concurrency), else an open loop at its rate."""
    return conditions.concurrency is not None


def sized_by_count(arms: Arms) -> bool:
    """The spec sets `arms.requests`: every arm sends that many (the count, as before waves)."""
    return "requests" in arms.model_fields_set


def vendor_request_count(conditions: ClaimConditions, arms: Arms) -> int:
    """The vendor's arm's requests. A closed loop: `1 + arms.waves` waves of the claim's concurrency
    (the first wave is warm-up): the claim's own `num_requests` is the vendor's sample, not ours. An
    open loop: the claim's `num_requests` unless the spec sets `arms.requests`, which then bounds it
    (the smaller wins); else `arms.requests`. With `arms.requests` set, a closed loop sends that
    many, bounded by the claim's `num_requests` where it says one."""
    if closed_loop(conditions) and not sized_by_count(arms):
        return (1 + arms.waves) * int(conditions.concurrency or 1)
    if conditions.num_requests is None:
        return arms.requests
    if sized_by_count(arms):
        return min(conditions.num_requests, arms.requests)
    return conditions.num_requests


def ladder_request_count(conditions: ClaimConditions, arms: Arms) -> int:
    """Each ladder step's requests: `1 + arms.ladder_waves` waves of the claim's concurrency, or
    `arms.requests` where the spec sets it."""
    if sized_by_count(arms):
        return arms.requests
    return (1 + arms.ladder_waves) * int(conditions.concurrency or 1)


# the seed of the vendor's open-loop arrivals: the same offsets every run
VENDOR_ARRIVALS_SEED = 0


def _id(arm: str, index: int) -> str:
    return f"{arm}-{index:05d}"


def vendor_conditions_arm(
    conditions: ClaimConditions, arms: Arms, tokenizer: Tokenizer, min_tokens: bool
) -> ArmPlan | None:
    """(a): `vendor_request_count` prompts of exactly `input_tokens` (each its own seeded text: no
    shared prefix, as the vendor's random-dataset benchmarks have none), closed loop at
    `concurrency`, or an open loop at `request_rate` (seeded `arrival_process` offsets)."""
    if not runnable(conditions):
        return None
    input_tokens, output_tokens = int(conditions.input_tokens or 0), int(conditions.output_tokens or 0)
    count = vendor_request_count(conditions, arms)
    offsets: list[float | None] = [None] * count
    if not closed_loop(conditions):
        process = conditions.arrival_process or "poisson"
        burstiness = conditions.burstiness or 1.0
        offsets = list(synthetic(count, float(conditions.request_rate or 0), process, VENDOR_ARRIVALS_SEED, burstiness))
    requests = []
    for index in range(count):
        messages, achieved = fit_messages(input_tokens, f"{VENDOR_CONDITIONS}:{index}", tokenizer)
        requests.append(
            PlannedRequest(
                request_id=_id(VENDOR_CONDITIONS, index),
                scheduled_offset_s=offsets[index],
                messages=messages,
                max_tokens=output_tokens,
                prompt_tokens_client=achieved,
                min_tokens=output_tokens if min_tokens else None,
            )
        )
    if closed_loop(conditions):
        return ArmPlan(
            VENDOR_CONDITIONS, "concurrency", int(conditions.concurrency or 1), requests, conditions.endpoint
        )
    return ArmPlan(VENDOR_CONDITIONS, "trace", 1, requests, conditions.endpoint)


def ladder_arms(
    plan: list[PlannedRequest], conditions: ClaimConditions, arms: Arms, tokenizer: Tokenizer, min_tokens: bool
) -> list[ArmPlan]:
    """(b), (c), (d) from the replay plan's production requests (labelled items mixed into the
    load are not the buyer's traffic: left out), `arms.requests` of them: the plan's first ones, or
    the plan over again when it is shorter (`buyer_requests`)."""
    production = production_requests(plan)
    if not runnable(conditions) or not closed_loop(conditions) or not arms.ladder or not production:
        return []
    buyer = buyer_requests(production, ladder_request_count(conditions, arms))
    concurrency, vendor_output = int(conditions.concurrency or 1), int(conditions.output_tokens or 0)
    lengths, outputs = [], []
    for index, item in enumerate(buyer):
        messages, achieved = fit_messages(item.prompt_tokens_client, f"{PROMPT_LENGTHS}:{index}", tokenizer)
        lengths.append(
            PlannedRequest(
                _id(PROMPT_LENGTHS, index),
                None,
                messages,
                vendor_output,
                achieved,
                min_tokens=vendor_output if min_tokens else None,
            )
        )
        outputs.append(
            PlannedRequest(_id(OUTPUT_LENGTHS, index), None, messages, item.max_tokens, achieved, item.min_tokens)
        )
    # a session turn follows its predecessor's copy in the same pass over the plan
    passes = [index // len(production) for index in range(len(buyer))]
    structure = _closed_loop_copies(buyer, passes, REQUEST_STRUCTURE, keep_fields=False)
    ladder = [
        ArmPlan(PROMPT_LENGTHS, "concurrency", concurrency, lengths, conditions.endpoint),
        ArmPlan(OUTPUT_LENGTHS, "concurrency", concurrency, outputs, conditions.endpoint),
        ArmPlan(REQUEST_STRUCTURE, "concurrency", concurrency, structure),
    ]
    if any(item.request_fields for item in buyer):
        settings = _closed_loop_copies(buyer, passes, REQUEST_SETTINGS, keep_fields=True)
        ladder.append(ArmPlan(REQUEST_SETTINGS, "concurrency", concurrency, settings))
    return ladder


def _closed_loop_copies(
    buyer: list[PlannedRequest], passes: list[int], arm: str, keep_fields: bool
) -> list[PlannedRequest]:
    """The buyer's requests as `arm` sends them, in a closed loop: ids `<arm>-<n>`, a session turn
    following its predecessor's copy in the same pass over the plan (no think time), the request
    fields kept or left out."""
    renamed = {(passes[i], item.request_id): _id(arm, i) for i, item in enumerate(buyer)}
    copies = []
    for index, item in enumerate(buyer):
        follows = renamed.get((passes[index], item.follows_request_id or ""))
        copies.append(
            dataclasses.replace(
                item,
                request_id=_id(arm, index),
                scheduled_offset_s=None,
                follows_request_id=follows,
                think_time_s=0.0 if follows is not None else None,
                request_fields=item.request_fields if keep_fields else None,
            )
        )
    return copies


def last_closed_loop(ladder: list[ArmPlan]) -> ArmPlan | None:
    """The ladder's last closed-loop step — (d2) where it runs, else (d) — whose requests and
    measured rate the arrival-process step takes."""
    return next((arm for arm in reversed(ladder) if arm.arm in (REQUEST_SETTINGS, REQUEST_STRUCTURE)), None)


def arrival_process_arm(plan: list[PlannedRequest], structure: ArmPlan, rate_per_s: float | None) -> ArmPlan | None:
    """(e): the last closed-loop step's requests (`structure`: (d2) or (d), `last_closed_loop`) at
    the plan's own offsets and think times, scaled by one factor so that the mean rate (requests
    over the span of the leads' offsets) equals that step's measured request rate. None when it
    measured no rate or the plan has no offsets (a closed-loop replay plan)."""
    production = production_requests(plan)
    logged = [item.scheduled_offset_s for item in production if item.scheduled_offset_s is not None]
    if not rate_per_s or rate_per_s <= 0 or len(logged) < 2 or max(logged) <= min(logged):
        return None
    start = min(logged)
    # a later pass over the plan starts one mean gap after the previous pass's span
    cycle_s = (max(logged) - start) * len(logged) / (len(logged) - 1)
    source = {item.request_id: production[_index(item.request_id) % len(production)] for item in structure.requests}
    unscaled: dict[str, float | None] = {}
    for item in structure.requests:
        logged_offset, passes = source[item.request_id].scheduled_offset_s, _index(item.request_id) // len(production)
        unscaled[item.request_id] = None if logged_offset is None else logged_offset - start + cycle_s * passes
    offsets = [offset for offset in unscaled.values() if offset is not None]
    if len(offsets) < 2 or max(offsets) <= min(offsets):
        return None
    logged_rate = len(structure.requests) / (max(offsets) - min(offsets))
    factor = logged_rate / rate_per_s  # > 1 stretches the plan (a slower endpoint), < 1 compresses it
    requests = []
    for item in structure.requests:
        offset = unscaled[item.request_id]
        think = source[item.request_id].think_time_s if item.follows_request_id is not None else None
        requests.append(
            dataclasses.replace(
                item,
                request_id=item.request_id.replace(structure.arm, ARRIVAL_PROCESS, 1),
                follows_request_id=(item.follows_request_id or "").replace(structure.arm, ARRIVAL_PROCESS, 1) or None,
                scheduled_offset_s=None if offset is None else offset * factor,
                think_time_s=None if think is None else think * factor,
            )
        )
    return ArmPlan(ARRIVAL_PROCESS, "trace", structure.concurrency, requests)


def production_requests(plan: list[PlannedRequest]) -> list[PlannedRequest]:
    """The buyer's own requests of the plan: labelled items mixed into the load are not its traffic."""
    return [item for item in plan if item.labelled_item_id is None]


def buyer_requests(production: list[PlannedRequest], count: int) -> list[PlannedRequest]:
    """`count` of the buyer's requests: the plan's first ones, or the plan over again (in order)
    when it is shorter, so that every step sends as many requests as the vendor's arm."""
    return [production[index % len(production)] for index in range(count)]


def _index(arm_request_id: str) -> int:
    """n of a ladder request id `<arm>-<n>`: the n-th production request of the plan."""
    return int(arm_request_id.rsplit("-", 1)[1])
