"""What is behind an endpoint: its models list, server headers, system_fingerprint, and hashes of
the replies to a few fixed greedy probe prompts — so a silent model change behind an unchanged
name shows up as a changed fingerprint — and, beside them, what the engine says about itself
where it says it (`engine`: quantisation, precision, slots; `pipeline/replay/endpoint/engine_facts.py`).

`engine` enters neither the version key nor `fingerprint_sha256`. It is read best-effort with a
short timeout from endpoints outside the OpenAI API, so one read that times out would make an
unchanged server a new model version (a whole re-validation) or a changed fingerprint. What of it
identifies the weights is already a stable fact where a server says it in its models list
(llama.cpp's `meta.ftype`), and a re-quantised model answers the probe prompts differently; the
rest (slots, KV cache dtype and blocks) is how the model is served, not which model it is."""

from __future__ import annotations

import hashlib
import json

import httpx

from pipeline.http_retry import check_status, retrying_client
from pipeline.replay.endpoint.engine_facts import engine_facts
from pipeline.replay.endpoint.reachability import models_response
from pipeline.replay.pacing.engine import Target

PROBES = (
    "Reply with the single word: ready.",
    "What is 17 + 25? Answer with the number only.",
    "Name the capital of France in one word.",
)
PROBE_MAX_TOKENS = 16
STABLE_HEADERS = ("server", "openai-version", "x-reference-profile")
TIMEOUT_S = 30.0

# What a models-list entry says about the model served that reads the same on every request
# (each server's shape and where it came from: tests/fixtures/models_lists/README.md). Left out:
# `created` (llama.cpp, vLLM and SGLang fill it with the time of the request; TGI with 0),
# vLLM's `permission` (a fresh `modelperm-<uuid>` and time per request), `object` (always
# "model"), llama.cpp's `aliases`/`tags` (names a deployment gives, not the model) and its router
# mode's `status` (which models are loaded right now).
STABLE_FIELDS = ("id", "version", "owned_by", "root", "parent", "max_model_len", "meta")
# llama.cpp's `meta`: facts of the GGUF and the slots it is served with (no counters)
LLAMA_CPP_META = ("vocab_type", "n_vocab", "n_ctx", "n_ctx_train", "n_embd", "n_params", "size", "ftype")
STABLE_PREFIX = "stable-"
# the key rule before issue 26: the entry's id, version, created and owned_by (`entry-<hash>`);
# kept to recognise partitions registered under it (see `legacy_version_key`)
LEGACY_FIELDS, LEGACY_PREFIX = ("id", "version", "created", "owned_by"), "entry-"


def _sha256(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def stable_facts(entry: dict) -> dict:
    """The entry's fields a server does not fill per request (`STABLE_FIELDS`; an absent and a
    null field are the same fact)."""
    facts = {key: entry[key] for key in STABLE_FIELDS if entry.get(key) is not None}
    if "meta" in facts:
        meta = facts.pop("meta")
        if isinstance(meta, dict) and any(key in meta for key in LLAMA_CPP_META):
            facts["meta"] = {key: meta[key] for key in LLAMA_CPP_META if key in meta}
    return facts


def list_models(client: httpx.Client, target: Target) -> tuple[list[dict], dict]:
    """The models list's entries as the server sent them, sorted by id, and its stable headers."""
    response = models_response(client, target)  # unreachable or key refused: says which candidate
    check_status(response, target.candidate, target.base_url, "the models list")
    entries = [entry for entry in response.json().get("data", []) if isinstance(entry, dict)]
    headers = {name: response.headers[name] for name in STABLE_HEADERS if name in response.headers}
    return sorted(entries, key=lambda e: str(e.get("id"))), headers


def _entry_of(models: list[dict], model: str) -> dict | None:
    return next((e for e in models if e.get("id") == model), None)


def advertised_version(models: list[dict], model: str) -> str:
    """The version the endpoint advertises for `model`: its `version` field where given, else a
    hash of its entry's stable facts (`stable-<hash>`: the same on every request of the same
    server and model)."""
    entry = _entry_of(models, model)
    if entry is None:
        return "absent"
    return str(entry["version"]) if entry.get("version") else STABLE_PREFIX + _sha256(stable_facts(entry))[:12]


def legacy_advertised_version(models: list[dict], model: str) -> str:
    """The advertised version under the key rule before issue 26 (`entry-<hash>` of id, version,
    created, owned_by): only to recognise a partition registered under it."""
    entry = _entry_of(models, model)
    if entry is None:
        return "absent"
    if entry.get("version"):
        return str(entry["version"])
    return LEGACY_PREFIX + _sha256({key: entry.get(key) for key in LEGACY_FIELDS if key in entry})[:12]


# What a probe adds for a server (by its `server` header) so that its greedy reply depends on the
# model alone: llama.cpp's server reuses a prompt's cached KV by default, and a reply computed from
# the cache differs from a cold one (measured on Gemma 3 270M Q4_K_M, llama.cpp b11434: the third
# probe's reply changed between the first probe of a fresh server and every later one), so the
# version key changed between the partition's probe and the replay's. Only the server that reads
# the field is sent it: OpenAI's API refuses fields it does not know.
PROBE_FIELDS_BY_SERVER = {"llama.cpp": {"cache_prompt": False}}


def probe(client: httpx.Client, target: Target, server: str | None = None) -> tuple[list[str], str | None]:
    """sha256 of each greedy probe reply, and the system_fingerprint where the server gives one.
    Asked on the candidate's `api` (a completions-only endpoint may serve no chat), whole."""
    hashes, system_fingerprint = [], None
    for prompt in PROBES:
        url, body = _probe_request(target, prompt)
        body.update(temperature=0, stream=False, **PROBE_FIELDS_BY_SERVER.get(server or "", {}))
        response = client.post(url, json=body, headers=target.headers())
        check_status(response, target.candidate, target.base_url, "the fingerprint's probe")
        reply = response.json()
        system_fingerprint = reply.get("system_fingerprint") or system_fingerprint
        hashes.append(hashlib.sha256((_reply_text(target.api, reply) or "").encode()).hexdigest())
    return hashes, system_fingerprint


def _probe_request(target: Target, prompt: str) -> tuple[str, dict]:
    """Where a probe goes and its body, on the target's API (api_kinds.py)."""
    messages = [{"role": "user", "content": prompt}]
    if target.api == "completions":
        return target.request_url, {"model": target.model, "prompt": prompt, "max_tokens": PROBE_MAX_TOKENS}
    if target.api == "responses":
        return target.request_url, {"model": target.model, "input": messages, "max_output_tokens": PROBE_MAX_TOKENS}
    return target.chat_url, {"model": target.model, "messages": messages, "max_tokens": PROBE_MAX_TOKENS}


def _reply_text(api: str, reply: dict) -> str | None:
    """A whole reply's answer text: chat's message content, a completion's text, a Response's
    output text (its message items' `output_text` parts)."""
    if api == "responses":
        items = [item for item in reply.get("output") or [] if isinstance(item, dict) and item.get("type") == "message"]
        parts = [part for item in items for part in item.get("content") or [] if isinstance(part, dict)]
        return "".join(str(part.get("text") or "") for part in parts if part.get("type") == "output_text")
    choice = (reply.get("choices") or [{}])[0]
    return choice.get("text") if api == "completions" else (choice.get("message") or {}).get("content")


def fingerprint(target: Target, with_probes: bool = True) -> dict:
    """What the endpoint serves. `models` holds each entry's stable facts only, so
    `fingerprint_sha256` (everything but the candidate, `engine` and `legacy_version_key`) is the
    same across probes of an unchanged server; `engine` is None where the server says nothing of
    itself."""
    with retrying_client(TIMEOUT_S) as client:  # a 429, a 5xx or a reset is retried (pipeline/http_retry.py)
        models, headers = list_models(client, target)
        probed = probe(client, target, headers.get("server")) if with_probes else ([], None)
        engine = engine_facts(client, target, _entry_of(models, target.model))
    probe_hashes, system_fingerprint = probed
    document = {
        "candidate": target.candidate,
        "model": target.model,
        "model_version": advertised_version(models, target.model),
        "models": [stable_facts(entry) for entry in models],
        "headers": headers,
        "system_fingerprint": system_fingerprint,
        "probe_sha256": probe_hashes,
    }
    document["fingerprint_sha256"] = _sha256({k: v for k, v in document.items() if k != "candidate"})
    document["legacy_version_key"] = _key(legacy_advertised_version(models, target.model), probe_hashes)
    document["engine"] = engine
    return document


def _key(model_version: str, probe_hashes: list[str]) -> str:
    replies = _sha256(probe_hashes)[:12] if probe_hashes else "noprobe"
    return f"{model_version}+{replies}"


def version_key(document: dict) -> str:
    """What the new-version sensor compares: the advertised version plus the probe replies, so a
    silent change behind an unchanged version string still counts as new."""
    return _key(document["model_version"], document["probe_sha256"])


def legacy_version_key(document: dict) -> str | None:
    """The key the rule before issue 26 gave the same probe (None in a document written before
    this field, or where it is the same as `version_key`): a partition or a sensor cursor from
    then is read as this version when it holds this key. Where the server filled `created` per
    request (llama.cpp, vLLM, SGLang) no old key ever matched twice, so none is recognised there."""
    legacy = document.get("legacy_version_key")
    return legacy if legacy and legacy != version_key(document) else None


def unseen(
    seen: dict[str, list[str]], current: dict[str, str], legacy: dict[str, str | None] | None = None
) -> list[tuple[str, str]]:
    """(candidate, version key) pairs not yet re-validated; a candidate whose `legacy` key (the
    rule before issue 26) was seen counts as seen at its current key."""
    legacy = legacy or {}
    return [
        (name, key)
        for name, key in sorted(current.items())
        if key not in seen.get(name, []) and legacy.get(name) not in seen.get(name, [])
    ]


def remember(
    seen: dict[str, list[str]], current: dict[str, str], legacy: dict[str, str | None]
) -> list[tuple[str, str]]:
    """The new-version sensor's cursor step: the (candidate, version key) pairs not seen before,
    each added to `seen`; a key whose old-rule key (`legacy`) was seen is added as well, so the
    next tick reads it directly, but it is not new."""
    new = unseen(seen, current, legacy)
    for name, key in sorted(current.items()):
        if key not in seen.get(name, []):
            seen.setdefault(name, []).append(key)
    return new
