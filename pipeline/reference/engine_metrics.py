"""`GET /metrics` of the reference endpoint: its engine's live state under vLLM's metric names.

A scraper written for vLLM (the replay's, or Prometheus) reads the reference endpoint as it reads
a real server: requests running and waiting, KV-cache use, pre-emptions, prefix-cache queries and
hits (in tokens), prompt and generation token counters, and the TTFT / end-to-end latency
histograms (on the engine's virtual clock: the server's own view, without transport).

Each value is read from the engine when scraped (a custom collector, not instruments updated on
the side), so a scrape equals the engine's state at that instant. Each app has its own
`CollectorRegistry`: servers in one process never share or collide on metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from pipeline.reference.engine_stats import EngineStats, Histogram
from pipeline.reference.serving_model import EngineCore

LABELS = ["model_name"]


class EngineCollector(Collector):
    """Reads `engine()` (the core and its count of requests waiting to join it; None for an
    instant profile, which has no engine: zeros) at every scrape."""

    def __init__(self, model_name: str, engine: Callable[[], tuple[EngineCore, int] | None]) -> None:
        self.model_name = model_name
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        state = self.engine()
        core, pending = state if state is not None else (None, 0)
        stats = core.stats if core is not None else EngineStats()
        cache = core.prefix_cache if core is not None else None
        label = [self.model_name]

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            family = GaugeMetricFamily(name, doc, labels=LABELS)
            family.add_metric(label, value)
            return family

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            family = CounterMetricFamily(name, doc, labels=LABELS)
            family.add_metric(label, value)
            return family

        def histogram(name: str, doc: str, hist: Histogram) -> HistogramMetricFamily:
            family = HistogramMetricFamily(name, doc, labels=LABELS)
            family.add_metric(label, hist.cumulative(), hist.total)
            return family

        running = len(core.running) if core is not None else 0
        waiting = len(core.waiting) + pending if core is not None else 0
        usage = kv_cache_usage(core)
        yield gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running)
        yield gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting)
        yield gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage)
        yield gauge("vllm:gpu_cache_usage_perc", "KV-cache usage (vLLM V0's name). 1 means 100 percent usage.", usage)
        yield counter("vllm:num_preemptions", "Cumulative number of preemptions.", stats.preemptions)
        yield counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            cache.queried_tokens if cache is not None else 0,
        )
        yield counter(
            "vllm:prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            cache.hit_tokens if cache is not None else 0,
        )
        yield counter("vllm:prompt_tokens", "Number of prefill tokens processed.", stats.prompt_tokens)
        yield counter("vllm:generation_tokens", "Number of generation tokens processed.", stats.generation_tokens)
        yield counter("vllm:request_success", "Count of successfully processed requests.", stats.finished_requests)
        yield histogram(
            "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", stats.ttft_s
        )
        yield histogram("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency.", stats.e2e_s)


def kv_cache_usage(core: EngineCore | None) -> float:
    """The share of the KV cache held (0 when it is unbounded, or there is no engine)."""
    if core is None or core.profile.kv_cache_tokens is None:
        return 0.0
    return core.kv_used / core.profile.kv_cache_tokens


def engine_registry(model_name: str, engine: Callable[[], tuple[EngineCore, int] | None]) -> CollectorRegistry:
    """A fresh registry (never prometheus_client's global one) holding one engine's collector."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(EngineCollector(model_name, engine))
    return registry


def exposition(registry: CollectorRegistry) -> tuple[bytes, str]:
    """The registry in Prometheus' text format, and its content type."""
    return generate_latest(registry), CONTENT_TYPE_LATEST
