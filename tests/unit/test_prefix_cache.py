"""The reference engine's prefix cache on its virtual clock: chained block hashes, LRU, a hit
skipping that block's prefill with the engine's KV and prefill accounting intact, and the
`/metrics` exposition equal to the engine's state at every step."""

from __future__ import annotations

import random

from prometheus_client.parser import text_string_to_metric_families

from pipeline.plan.synthetic_prompts import ApproxTokenizer, fit_messages
from pipeline.reference import ServingProfile, load_profile
from pipeline.reference.engine_metrics import engine_registry, exposition
from pipeline.reference.prefix_cache import PrefixCache, block_hashes
from pipeline.reference.serving_model import EngineCore, Sequence
from pipeline.reference.simulation import Arrival, bursty_mixed_arrivals, percentile, simulate
from pipeline.tokens import message_tokens


def _profile(**overrides: object) -> ServingProfile:
    fields = {
        "name": "t",
        "prefill_ms_per_token": 0.1,
        "decode_ms_per_token": 10.0,
        "decode_slowdown_per_seq": 0.05,
        "max_running_seqs": 8,
        "max_batch_tokens": 512,
        "kv_cache_tokens": 20000,
        "kv_block_tokens": 16,
    }
    return ServingProfile(**{**fields, **overrides})


def _words(seed: str, n: int) -> list[str]:
    rng = random.Random(seed)
    return [f"w{rng.randrange(1000)}" for _ in range(n)]


def test_block_hashes_are_chained_full_blocks_only() -> None:
    shared = _words("shared", 40)
    a = block_hashes([*shared, *_words("a", 30)], 16)
    b = block_hashes([*shared, *_words("b", 30)], 16)
    assert len(a) == len(b) == 70 // 16  # the partial last block is not hashed
    assert a[:2] == b[:2] and a[2] != b[2]  # blocks 0-1 lie inside the shared 40 tokens, block 2 does not
    # chained: the same block content after a different prefix hashes differently
    assert block_hashes([*_words("x", 16), *shared[:16]], 16)[1] != block_hashes(shared[:16], 16)[0]
    assert block_hashes(shared, 16) == block_hashes(list(shared), 16)  # deterministic


def test_lru_keeps_the_most_recent_blocks_and_the_last_token_is_computed() -> None:
    cache = PrefixCache(block_tokens=4, capacity_blocks=3)
    cache.register([1, 2, 3])
    assert cache.lookup([1, 2], context_tokens=100) == 8
    cache.register([4])  # evicts 3, the least recently used (1 and 2 were just hit)
    assert cache.lookup([1, 2, 3], context_tokens=100) == 8
    # a whole prompt found cached still leaves its last token to compute: 12 tokens → 2 blocks
    cache.register([1, 2, 3])
    assert cache.lookup([1, 2, 3], context_tokens=12) == 8
    assert (cache.queried_tokens, cache.hit_tokens) == (212, 24)


def _run(core: EngineCore, now: int = 0) -> int:
    while not core.idle:
        now = core.step(now).end_ns
    return now


def test_a_repeated_prompt_skips_its_cached_prefill_and_kv_balances() -> None:
    profile = _profile()
    hashes = block_hashes(_words("p", 1000), 16)
    core = EngineCore(profile)
    first = Sequence(0, 1000, 4, 0, block_hashes=hashes)
    core.add(first)
    now = _run(core)
    second = Sequence(1, 1000, 4, now, block_hashes=hashes)
    core.add(second)
    step = core.step(now)
    assert first.cached_tokens == 0 and second.cached_tokens == 992  # 62 full blocks of 999 tokens
    assert step.prefill_tokens == 8 and second.first_token_ns == step.end_ns
    assert second.first_token_ns - second.arrival_ns < first.first_token_ns - first.arrival_ns
    _run(core, step.end_ns)
    assert core.kv_used == 0 and core.stats.prompt_tokens == 2000
    assert core.prefix_cache is not None and core.prefix_cache.hit_tokens == 992

    off = EngineCore(_profile(prefix_cache=False))
    for i in range(2):
        off.add(Sequence(i, 1000, 4, 0, block_hashes=hashes))
    _run(off)
    assert off.prefix_cache is None


def _prompt_hashes(shared: bool, n: int, block_tokens: int) -> list[tuple[int, tuple[int, ...]]]:
    """n chats of ~1.2k tokens: with `shared`, each opens with one of 4 long common prefixes (a
    system prompt and history, as in Mooncake's hash_ids); else the same lengths, scrambled."""
    tokenizer, out = ApproxTokenizer(), []
    for i in range(n):
        prefix = [i % 4 * 10 + b for b in range(2)] if shared else [1000 + i * 10 + b for b in range(2)]
        messages, achieved = fit_messages(1200 + (i * 37) % 200, f"r{i}", tokenizer, prefix, block_tokens=512)
        out.append((achieved, block_hashes(message_tokens(messages), block_tokens)))
    return out


def test_shared_prefixes_give_lower_ttft_than_the_same_lengths_scrambled() -> None:
    profile = load_profile("demo")
    arrivals = bursty_mixed_arrivals(6.0, 40.0, seed=3)
    shared = _prompt_hashes(True, len(arrivals), profile.kv_block_tokens)
    scrambled = _prompt_hashes(False, len(arrivals), profile.kv_block_tokens)
    assert [n for n, _ in shared] == [n for n, _ in scrambled]  # same prompt lengths

    def run(prompts: list[tuple[int, tuple[int, ...]]]) -> list[float]:
        sim = simulate(profile, [Arrival(a.arrival_ns, n, a.output_tokens, h) for a, (n, h) in zip(arrivals, prompts)])
        return sim.ttft_ms()

    with_reuse, without = run(shared), run(scrambled)
    assert percentile(with_reuse, 50) < percentile(without, 50)
    assert percentile(with_reuse, 95) < percentile(without, 95)


def _scrape(registry) -> dict[str, float]:
    body, _ = exposition(registry)
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
        if not sample.name.endswith(("_bucket", "_created"))
    }


def test_metrics_equal_the_engine_state_at_every_step() -> None:
    """Under a bursty load that queues and pre-empts, every scrape between steps reads the
    engine's running, waiting, KV use and counters exactly."""
    profile = _profile(kv_cache_tokens=3000, max_running_seqs=6, decode_ms_per_token=80.0)
    core = EngineCore(profile)
    registry = engine_registry("m", lambda: (core, 0))
    arrivals = bursty_mixed_arrivals(3.0, 6.0, seed=5, prompt_median=300, output_median=200, max_tokens=1400)
    words = _words("system", 400)
    order = [
        Sequence(
            i, a.prompt_tokens, a.output_tokens, a.arrival_ns, block_hashes=block_hashes(words[: a.prompt_tokens], 16)
        )
        for i, a in enumerate(arrivals)
    ]
    now, k, seen_waiting, seen_preempted = 0, 0, 0, 0
    while k < len(order) or not core.idle:
        while k < len(order) and order[k].arrival_ns <= now:
            core.add(order[k])
            k += 1
        if core.idle:
            now = order[k].arrival_ns
            continue
        now = core.step(now).end_ns
        scraped = _scrape(registry)
        assert scraped["vllm:num_requests_running"] == len(core.running)
        assert scraped["vllm:num_requests_waiting"] == len(core.waiting)
        assert scraped["vllm:kv_cache_usage_perc"] == core.kv_used / 3000
        assert scraped["vllm:num_preemptions_total"] == core.stats.preemptions
        assert scraped["vllm:generation_tokens_total"] == core.stats.generation_tokens
        assert core.prefix_cache is not None
        assert scraped["vllm:prefix_cache_hits_total"] == core.prefix_cache.hit_tokens
        assert scraped["vllm:time_to_first_token_seconds_count"] == core.stats.ttft_s.count
        seen_waiting = max(seen_waiting, len(core.waiting))
        seen_preempted = core.stats.preemptions
    assert seen_waiting > 0 and seen_preempted > 0  # the load did queue and pre-empt
    assert _scrape(registry)["vllm:e2e_request_latency_seconds_count"] == len(order)
    assert _scrape(registry)["vllm:prefix_cache_hits_total"] > 0
