"""What is behind an endpoint: its models list, server headers, system_fingerprint, and hashes of
the replies to a few fixed greedy probe prompts — so a silent model change behind an unchanged
name shows up as a changed fingerprint."""

from __future__ import annotations

import hashlib
import json

import httpx

from pipeline.replay.engine import Target
from pipeline.replay.preflight import models_response

PROBES = (
    "Reply with the single word: ready.",
    "What is 17 + 25? Answer with the number only.",
    "Name the capital of France in one word.",
)
PROBE_MAX_TOKENS = 16
STABLE_HEADERS = ("server", "openai-version", "x-reference-profile")
TIMEOUT_S = 30.0


def _sha256(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def list_models(client: httpx.Client, target: Target) -> tuple[list[dict], dict]:
    response = models_response(client, target)  # unreachable or key refused: says which candidate
    response.raise_for_status()
    entries = [
        {key: entry.get(key) for key in ("id", "version", "created", "owned_by") if key in entry}
        for entry in response.json().get("data", [])
    ]
    headers = {name: response.headers[name] for name in STABLE_HEADERS if name in response.headers}
    return sorted(entries, key=lambda e: str(e.get("id"))), headers


def advertised_version(models: list[dict], model: str) -> str:
    """The version the endpoint advertises for `model`: its `version` field where given, else a
    hash of its models-list entry (id, created, owner)."""
    entry = next((e for e in models if e.get("id") == model), None)
    if entry is None:
        return "absent"
    return str(entry["version"]) if entry.get("version") else "entry-" + _sha256(entry)[:12]


def probe(client: httpx.Client, target: Target) -> tuple[list[str], str | None]:
    """sha256 of each greedy probe reply, and the system_fingerprint where the server gives one."""
    hashes, system_fingerprint = [], None
    for prompt in PROBES:
        body = {
            "model": target.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": PROBE_MAX_TOKENS,
            "temperature": 0,
            "stream": False,
        }
        response = client.post(target.chat_url, json=body, headers=target.headers())
        response.raise_for_status()
        reply = response.json()
        system_fingerprint = reply.get("system_fingerprint") or system_fingerprint
        content = (reply.get("choices") or [{}])[0].get("message", {}).get("content")
        hashes.append(hashlib.sha256((content or "").encode()).hexdigest())
    return hashes, system_fingerprint


def fingerprint(target: Target, with_probes: bool = True) -> dict:
    with httpx.Client(timeout=TIMEOUT_S, trust_env=False) as client:
        models, headers = list_models(client, target)
        probe_hashes, system_fingerprint = probe(client, target) if with_probes else ([], None)
    document = {
        "candidate": target.candidate,
        "model": target.model,
        "model_version": advertised_version(models, target.model),
        "models": models,
        "headers": headers,
        "system_fingerprint": system_fingerprint,
        "probe_sha256": probe_hashes,
    }
    document["fingerprint_sha256"] = _sha256({k: v for k, v in document.items() if k != "candidate"})
    return document


def version_key(document: dict) -> str:
    """What the new-version sensor compares: the advertised version plus the probe replies, so a
    silent change behind an unchanged version string still counts as new."""
    replies = _sha256(document["probe_sha256"])[:12] if document["probe_sha256"] else "noprobe"
    return f"{document['model_version']}+{replies}"


def unseen(seen: dict[str, list[str]], current: dict[str, str]) -> list[tuple[str, str]]:
    """(candidate, version key) pairs not yet re-validated."""
    return [(name, key) for name, key in sorted(current.items()) if key not in seen.get(name, [])]
