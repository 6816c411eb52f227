"""What the serving engine says about itself, where it says it: the weights' quantisation and
precision, the slots it batches over, its KV cache's dtype, read best-effort beside the endpoint
fingerprint (`engine` in endpoint_fingerprint.json).

Three servers say it, each on its own GET at the server's root (the shapes and where they came
from: tests/fixtures/engine_facts/README.md):
- llama.cpp's `/props`: `model_ftype` (`Q4_K - Medium`), `total_slots`, the context a slot has
  (`default_generation_settings.n_ctx`), `build_info`;
- SGLang's `/get_server_info`: its server args (`quantization`, `dtype`, `kv_cache_dtype`,
  `max_running_requests`, `context_length`) and `version`;
- vLLM's `/metrics`: the `vllm:cache_config_info` gauge, whose labels are its cache config
  (`cache_dtype`, `block_size`, `num_gpu_blocks`, `enable_prefix_caching`,
  `gpu_memory_utilization`), with the models entry's `max_model_len`. vLLM says nothing of the
  weights' quantisation there: its precision stays unknown.

A server that answers none of them (the reference endpoint, a hosted API) has no engine facts
(None). Nothing here may fail the fingerprint: every read has a short timeout and any failure is
"not said". Only the facts a server keeps for its lifetime are kept (never `is_sleeping`, slot
states or counters), so two reads of one server give one section.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx

from pipeline.precision_names import precision_of
from pipeline.replay.pacing.engine import Target

ENGINE_TIMEOUT_S = 2.0
CACHE_CONFIG_INFO = "vllm:cache_config_info"
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def server_root(base_url: str) -> str:
    """The server's root: an OpenAI base URL's `/v1` (where it has one) dropped."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _integer(value: object) -> int | None:
    try:
        return int(str(value)) if value is not None and str(value) not in ("", "None") else None
    except ValueError:
        return None


def _number(value: object) -> float | None:
    try:
        return float(str(value)) if value is not None and str(value) not in ("", "None") else None
    except ValueError:
        return None


def _named(value: object) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text if text and text not in ("None", "null") else None


def _section(source: str, server: str, quantization: str | None, **facts: object) -> dict:
    precision = precision_of(quantization)
    return {
        "source": source,
        "server": server,
        "quantization": quantization,
        "precision": precision.name if precision else None,
        "weight_bits": precision.weight_bits if precision else None,
        **facts,
    }


def from_llama_cpp_props(props: dict) -> dict | None:
    """llama.cpp's `/props`: None where it is not llama.cpp's answer."""
    if "model_ftype" not in props and "total_slots" not in props:
        return None
    settings = props.get("default_generation_settings")
    return _section(
        "llama.cpp /props",
        "llama.cpp",
        _named(props.get("model_ftype")),
        slots=_integer(props.get("total_slots")),
        context_per_slot=_integer(settings.get("n_ctx")) if isinstance(settings, dict) else None,
        kv_cache_dtype=None,
        build=_named(props.get("build_info")),
    )


def from_sglang_server_info(info: dict) -> dict | None:
    """SGLang's `/get_server_info` (its server args, scheduler info and version): None where it
    is not SGLang's answer. `quantization` names the weights' scheme where set; otherwise `dtype`
    does, unless it is "auto" (the checkpoint's own dtype, not said)."""
    if "model_path" not in info or "dtype" not in info:
        return None
    named = _named(info.get("quantization")) or _named(info.get("dtype"))
    return _section(
        "sglang /get_server_info",
        "sglang",
        named,
        slots=_integer(info.get("max_running_requests")),
        context_length=_integer(info.get("context_length")),
        kv_cache_dtype=_named(info.get("kv_cache_dtype")),
        build=_named(info.get("version")),
    )


def cache_config_labels(metrics_text: str) -> dict[str, str] | None:
    """The labels of vLLM's `vllm:cache_config_info` sample (engine 0's, the first), or None."""
    for line in metrics_text.splitlines():
        if line.startswith(CACHE_CONFIG_INFO + "{"):
            return dict(LABEL.findall(line))
    return None


def from_vllm_cache_config(labels: dict[str, str], max_model_len: object = None) -> dict:
    """vLLM's cache config labels (with the models entry's `max_model_len`): no weight precision."""
    return _section(
        "vllm /metrics cache_config_info",
        "vllm",
        None,
        slots=None,
        context_length=_integer(max_model_len),
        kv_cache_dtype=_named(labels.get("cache_dtype")),
        block_size=_integer(labels.get("block_size")),
        kv_cache_blocks=_integer(labels.get("num_gpu_blocks")),
        prefix_caching=_named(labels.get("enable_prefix_caching")),
        gpu_memory_utilization=_number(labels.get("gpu_memory_utilization")),
    )


def _get(client: httpx.Client, target: Target, path: str) -> httpx.Response | None:
    try:
        response = client.get(server_root(target.base_url) + path, headers=target.headers(), timeout=ENGINE_TIMEOUT_S)
    except httpx.HTTPError:
        return None
    return response if response.status_code == 200 else None


def _json_reader(path: str, read: Callable[[dict], dict | None]) -> Callable[[httpx.Client, Target, dict], dict | None]:
    def reader(client: httpx.Client, target: Target, entry: dict) -> dict | None:
        response = _get(client, target, path)
        try:
            body = response.json() if response is not None else None
        except ValueError:
            return None
        return read(body) if isinstance(body, dict) else None

    return reader


def _vllm_reader(client: httpx.Client, target: Target, entry: dict) -> dict | None:
    response = _get(client, target, "/metrics")
    labels = cache_config_labels(response.text) if response is not None else None
    return from_vllm_cache_config(labels, entry.get("max_model_len")) if labels is not None else None


READERS = (
    _json_reader("/props", from_llama_cpp_props),
    _json_reader("/get_server_info", from_sglang_server_info),
    _vllm_reader,
)


def engine_facts(client: httpx.Client, target: Target, entry: dict | None = None) -> dict | None:
    """The first engine section a server answers (llama.cpp, SGLang, vLLM, in that order), or None.
    `entry` is the target model's models-list entry (vLLM's `max_model_len`)."""
    for read in READERS:
        try:
            facts = read(client, target, entry or {})
        except (httpx.HTTPError, ValueError, TypeError, AttributeError):  # a shape no reader knows
            facts = None
        if facts is not None:
            return facts
    return None
