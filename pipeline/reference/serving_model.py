"""The serving performance model: a step-based continuous-batching scheduler on a virtual clock.

`EngineCore` is pure (no I/O, no asyncio, no wall clock): callers add sequences and call `step`,
which returns the step's modelled duration and the tokens it produced. `simulate` drives it with
a virtual clock from a list of arrivals; `pipeline/reference/serving_loop.py` drives the very
same core from the HTTP server in (slept) real time. Same arrivals → same timeline, to the ns.

One step, at virtual time T:
1. KV cache (`kv_policy: preempt`): if the decoding sequences need more KV slots than are free,
   the most recently admitted running sequence is pre-empted (its KV freed, it goes back to the
   head of the queue and later re-prefills its prompt plus the tokens it already produced).
2. Decode: every running sequence that finished its prefill produces one token (1 budget token).
3. Prefill (chunked): what is left of `max_batch_tokens` goes to prefilling sequences, oldest
   first; waiting sequences are admitted in arrival order (strict FIFO: the head blocks the
   rest) while fewer than `max_running_seqs` run and the KV cache can take them. A sequence whose
   prefill completes in this step produces its next token at the end of the step.
4. Duration = step_overhead + prefill_ms_per_token × prefill tokens + decode_step_ms(decoders)
   + constrained_decode_ms_per_token × the decoders whose output a schema or tool call constrains.

Prefix cache (`prefix_cache: true`, prefix_cache.py): a sequence admitted (or re-admitted after a
pre-emption) starts its `context_prefilled` at the tokens of its leading prompt blocks already
cached, so only the rest is prefilled (and costed); the cached tokens still count in the KV it
holds. Every prompt block a prefill completes is registered in the cache.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from pipeline.reference.engine_stats import EngineStats
from pipeline.reference.prefix_cache import PrefixCache
from pipeline.reference.serving_profile import ServingProfile

NS_PER_MS = 1_000_000


def prefill_ms(profile: ServingProfile, prompt_tokens: int) -> float:
    """Prefill cost of `prompt_tokens` tokens, in milliseconds (linear in the chunk)."""
    return max(prompt_tokens, 0) * profile.prefill_ms_per_token


def decode_step_ms(profile: ServingProfile, running: int) -> float:
    """Decode cost of one step (one token each) with `running` sequences decoding together."""
    return profile.decode_ms_per_token * (1 + profile.decode_slowdown_per_seq * (max(running, 1) - 1))


def step_duration_ns(profile: ServingProfile, prefill_tokens: int, decoding: int, constrained: int = 0) -> int:
    """Modelled duration of one engine step, in integer ns (so timelines compare exactly);
    `constrained` of the `decoding` sequences pay the grammar's per-token cost."""
    ms = profile.step_overhead_ms + prefill_ms(profile, prefill_tokens)
    if decoding:
        ms += decode_step_ms(profile, decoding) + profile.constrained_decode_ms_per_token * constrained
    return round(ms * NS_PER_MS)


class PromptTooLong(ValueError):
    """The prompt (plus reservation) can never fit in the KV cache."""


@dataclass
class Sequence:
    """One request inside the engine. Times are virtual ns since the engine's origin."""

    seq_id: int
    prompt_tokens: int
    output_tokens: int
    arrival_ns: int
    generated: int = 0
    context_prefilled: int = 0  # tokens of this sequence's context held in the KV cache
    preemptions: int = 0
    admitted_ns: int | None = None
    first_token_ns: int | None = None
    end_ns: int | None = None
    block_hashes: tuple[int, ...] = ()  # the prompt's chained block hashes (prefix_cache.py)
    cached_tokens: int | None = None  # prompt tokens found in the prefix cache at first admission
    blocks_registered: int = 0  # leading prompt blocks this sequence has put in the cache
    constrained: bool = False  # a JSON schema or tool call constrains its output (costed per token)

    @property
    def context_tokens(self) -> int:
        """Tokens that must be in the KV cache before the next decode step: the prompt and every
        produced token but the latest (which is that step's input)."""
        return self.prompt_tokens + max(self.generated - 1, 0)

    @property
    def prefilling(self) -> bool:
        return self.context_prefilled < self.context_tokens

    @property
    def finished(self) -> bool:
        return self.end_ns is not None


@dataclass
class StepResult:
    start_ns: int
    duration_ns: int
    prefill_tokens: int
    decoding: int
    tokens: list[int] = field(default_factory=list)  # seq_ids that produced one token
    finished: list[int] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


class EngineCore:
    """Continuous-batching scheduler state; see the module docstring for one step's rules."""

    def __init__(self, profile: ServingProfile) -> None:
        self.profile = profile
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []  # admission order
        self.kv_used = 0
        self.stats = EngineStats()
        self.prefix_cache = (
            PrefixCache(profile.kv_block_tokens, profile.prefix_cache_capacity_blocks) if profile.prefix_cache else None
        )

    # --- intake ------------------------------------------------------------------------------

    def check_fits(self, prompt_tokens: int, output_tokens: int) -> None:
        """Raise PromptTooLong when prompt + output exceed the KV cache (the context limit)."""
        capacity = self.profile.kv_cache_tokens
        if capacity is not None and prompt_tokens + output_tokens > capacity:
            raise PromptTooLong(
                f"this request needs {prompt_tokens + output_tokens} tokens of context "
                f"({prompt_tokens} prompt + {output_tokens} output); the KV cache holds {capacity}"
            )

    def add(self, seq: Sequence) -> None:
        self.check_fits(seq.prompt_tokens, seq.output_tokens)
        self.waiting.append(seq)

    def cancel(self, seq_id: int) -> None:
        """Drop a sequence (client gone): free its slot and KV."""
        for seq in self.running:
            if seq.seq_id == seq_id:
                self.running.remove(seq)
                self.kv_used -= self._kv_held(seq)
                return
        self.waiting = deque(s for s in self.waiting if s.seq_id != seq_id)

    @property
    def idle(self) -> bool:
        return not self.running and not self.waiting

    # --- one step ----------------------------------------------------------------------------

    def step(self, now_ns: int) -> StepResult:
        """Plan and account one step starting at `now_ns`; the caller advances its clock."""
        preempted = self._preempt_for_kv()
        budget = self.profile.max_batch_tokens or _UNBOUNDED
        decoders = [s for s in self.running if not s.prefilling][:budget]
        budget -= len(decoders)
        chunks = self._plan_prefill(budget, now_ns)
        prefill_tokens = sum(n for _, n in chunks)
        result = StepResult(
            now_ns,
            step_duration_ns(self.profile, prefill_tokens, len(decoders), sum(s.constrained for s in decoders)),
            prefill_tokens,
            len(decoders),
            preempted=preempted,
        )
        end = result.end_ns
        for seq in decoders:
            self._fill(seq, 1)
            self._produce(seq, end, result)
        for seq, n in chunks:
            self._fill(seq, n)
            if not seq.prefilling:
                self._produce(seq, end, result)
        return result

    def _fill(self, seq: Sequence, n: int) -> None:
        seq.context_prefilled += n
        if self.profile.kv_policy == "preempt":
            self.kv_used += n
        if self.prefix_cache is not None:
            done = min(len(seq.block_hashes), seq.context_prefilled // self.prefix_cache.block_tokens)
            if done > seq.blocks_registered:
                self.prefix_cache.register(seq.block_hashes[seq.blocks_registered : done])
                seq.blocks_registered = done

    def _produce(self, seq: Sequence, end_ns: int, result: StepResult) -> None:
        if seq.generated < seq.output_tokens:
            seq.generated += 1
            result.tokens.append(seq.seq_id)
            self.stats.generation_tokens += 1
            if seq.first_token_ns is None:
                seq.first_token_ns = end_ns
                self.stats.prompt_tokens += seq.prompt_tokens
                self.stats.ttft_s.observe((end_ns - seq.arrival_ns) / 1e9)
        if seq.generated >= seq.output_tokens:
            seq.end_ns = end_ns
            self.stats.finished_requests += 1
            self.stats.e2e_s.observe((end_ns - seq.arrival_ns) / 1e9)
            self.running.remove(seq)
            self.kv_used -= self._kv_held(seq)
            result.finished.append(seq.seq_id)

    def _kv_held(self, seq: Sequence) -> int:
        if self.profile.kv_policy == "reserve":
            return seq.prompt_tokens + seq.output_tokens
        return seq.context_prefilled

    def _kv_free(self) -> int:
        capacity = self.profile.kv_cache_tokens
        return _UNBOUNDED if capacity is None else capacity - self.kv_used

    def _kv_needed_by_running(self) -> int:
        """KV the running sequences need to finish this step: one per decoder, plus the rest of
        every unfinished prefill (kept free so chunked prefills can never starve each other)."""
        return sum(1 if not s.prefilling else s.context_tokens - s.context_prefilled for s in self.running)

    def _preempt_for_kv(self) -> list[int]:
        if self.profile.kv_policy != "preempt" or self.profile.kv_cache_tokens is None:
            return []
        preempted: list[int] = []
        while self.running and self._kv_needed_by_running() > self._kv_free():
            victim = self.running.pop()  # the newest admitted (recompute pre-emption, as vLLM)
            self.kv_used -= victim.context_prefilled
            victim.context_prefilled = 0
            victim.blocks_registered = 0
            victim.preemptions += 1
            self.stats.preemptions += 1
            self.waiting.appendleft(victim)
            preempted.append(victim.seq_id)
        return preempted

    def _plan_prefill(self, budget: int, now_ns: int) -> list[tuple[Sequence, int]]:
        chunks: list[tuple[Sequence, int]] = []
        for seq in self.running:
            if budget <= 0:
                return chunks
            if seq.prefilling:
                n = min(seq.context_tokens - seq.context_prefilled, budget)
                chunks.append((seq, n))
                budget -= n
        free = self._kv_free()
        if self.profile.kv_policy == "preempt":  # reserve: running sequences hold theirs already
            free -= self._kv_needed_by_running()
        while self.waiting and budget > 0 and len(self.running) < self.profile.max_running_seqs:
            head = self.waiting[0]
            need = (
                head.prompt_tokens + head.output_tokens
                if self.profile.kv_policy == "reserve"
                else head.context_tokens + 1
            )  # preempt: the whole context plus one token
            if need > free:
                break  # strict FIFO: the head of the queue blocks the rest
            free -= need
            self.waiting.popleft()
            self.running.append(head)
            if self.profile.kv_policy == "reserve":
                self.kv_used += need
            cached = self._cached_prefix(head)
            if head.admitted_ns is None:
                head.admitted_ns = now_ns
                head.cached_tokens = cached
            n = min(head.context_tokens - cached, budget)
            chunks.append((head, n))
            budget -= n
        return chunks

    def _cached_prefix(self, seq: Sequence) -> int:
        """On admission: take the sequence's cached leading blocks as already prefilled (their KV
        counts as held from now on) and return how many tokens that is."""
        if self.prefix_cache is None:
            return 0
        cached = self.prefix_cache.lookup(seq.block_hashes, seq.context_tokens)
        seq.context_prefilled = cached
        seq.blocks_registered = cached // self.prefix_cache.block_tokens
        if self.profile.kv_policy == "preempt":
            self.kv_used += cached
        return cached


_UNBOUNDED = 1 << 62
