"""The model-version key is made of stable facts only: two probes of the same server give the same
key although llama.cpp, vLLM and SGLang fill `created` (and vLLM its permission ids) per request;
a changed fact is a new key; a partition registered under the key rule before issue 26 is still
read; a failed partition match explains itself. Each server's answer is a recorded shape
(tests/fixtures/models_lists/README.md), served twice through the fingerprint's own reading."""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from pathlib import Path

import httpx
import pytest

from pipeline.files.partition_keys import partition_safe
from pipeline.quality import rules
from pipeline.replay.endpoint import fingerprint as fp
from pipeline.replay.pacing.engine import Target

FIXTURES = Path(__file__).parents[1] / "fixtures" / "models_lists"
PROBES = ["a" * 64, "b" * 64, "c" * 64]
CLOCK = itertools.count(1_764_612_000, 7)  # a later time on every request, like the servers' clocks


def _as_served(answer: dict, server: str) -> dict:
    """`answer` as its server sends it on one more request: what the source fills per request,
    filled anew (README: llama.cpp, vLLM, SGLang `created` = now; vLLM a fresh permission id)."""
    answer = copy.deepcopy(answer)
    now = next(CLOCK)
    for entry in answer["data"]:
        if server != "tgi":  # TGI answers created 0 every time
            entry["created"] = now
        for permission in entry.get("permission", []):
            permission["id"], permission["created"] = f"modelperm-{uuid.uuid4().hex}", now
    return answer


def _probe(monkeypatch, answer: dict, model: str) -> dict:
    """fingerprint() reading `answer` as its /v1/models (no probe prompts: the replies' part of the
    key is the reference endpoint's test's business)."""

    def models_response(client, target):
        return httpx.Response(200, json=answer, request=httpx.Request("GET", target.base_url + "/models"))

    monkeypatch.setattr(fp, "models_response", models_response)
    document = fp.fingerprint(Target("c", "http://127.0.0.1:9/v1", model), with_probes=False)
    document["probe_sha256"] = PROBES
    document["legacy_version_key"] = fp._key(document["legacy_version_key"].split("+")[0], PROBES)
    document["version_key"] = fp.version_key(document)
    return document


SERVERS = {
    "llama_server": "gemma-3-270m-it-Q4_K_M.gguf",
    "vllm": "meta-llama/Llama-3.1-8B-Instruct",
    "sglang": "Qwen/Qwen2.5-7B-Instruct",
    "tgi": "HuggingFaceH4/zephyr-7b-beta",
}


def _recorded(server: str) -> dict:
    return json.loads((FIXTURES / f"{server}.json").read_text())


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_two_probes_of_the_same_server_give_the_same_key(monkeypatch, server):
    recorded, model = _recorded(server), SERVERS[server]
    one = _probe(monkeypatch, _as_served(recorded, server), model)
    two = _probe(monkeypatch, _as_served(recorded, server), model)
    assert one["model_version"].startswith(fp.STABLE_PREFIX)
    assert one["version_key"] == two["version_key"] and one["fingerprint_sha256"] == two["fingerprint_sha256"]
    assert one["models"] == two["models"] and all("created" not in entry for entry in one["models"])
    # the old rule hashed `created`: a new key on every probe, except where the server sends 0
    assert (one["legacy_version_key"] == two["legacy_version_key"]) is (server == "tgi")


def test_the_stable_facts_of_each_server():
    facts = {server: fp.stable_facts(_entry(server)) for server in SERVERS}
    assert facts["llama_server"] == {
        "id": "gemma-3-270m-it-Q4_K_M.gguf",
        "owned_by": "llamacpp",
        "meta": {
            "vocab_type": 1,
            "n_vocab": 262144,
            "n_ctx": 4096,
            "n_ctx_train": 32768,
            "n_embd": 640,
            "n_params": 268098176,
            "size": 241410624,
            "ftype": "Q4_K - Medium",
        },
    }
    assert facts["vllm"] == {
        "id": "meta-llama/Llama-3.1-8B-Instruct",
        "owned_by": "vllm",
        "root": "/models/Llama-3.1-8B-Instruct",
        "max_model_len": 8192,
    }
    assert facts["sglang"] == {
        "id": "Qwen/Qwen2.5-7B-Instruct",
        "owned_by": "sglang",
        "root": "Qwen/Qwen2.5-7B-Instruct",
        "max_model_len": 32768,
    }
    assert facts["tgi"] == {"id": "HuggingFaceH4/zephyr-7b-beta", "owned_by": "HuggingFaceH4/zephyr-7b-beta"}
    lora = next(e for e in _recorded("vllm")["data"] if e["id"] == "sql-lora")
    assert fp.stable_facts(lora)["parent"] == "meta-llama/Llama-3.1-8B-Instruct"


def _entry(server: str) -> dict:
    return next(e for e in _recorded(server)["data"] if e["id"] == SERVERS[server])


@pytest.mark.parametrize(
    ("server", "path", "value"),
    [
        ("llama_server", ("meta", "ftype"), "Q8_0"),  # another quantisation of the same model
        ("llama_server", ("meta", "n_params"), 999),
        ("vllm", ("root",), "/models/Llama-3.1-8B-Instruct-v2"),  # new weights behind the same name
        ("sglang", ("max_model_len",), 8192),
    ],
)
def test_a_changed_fact_is_a_new_version(server, path, value):
    entry = _entry(server)
    changed = copy.deepcopy(entry)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    model = SERVERS[server]
    assert fp.advertised_version([entry], model) != fp.advertised_version([changed], model)


def test_an_advertised_version_field_is_the_version_and_the_old_rule_agrees():
    entry = {"id": "m", "object": "model", "created": 5, "owned_by": "loadproof", "version": "2026-12-01"}
    assert fp.advertised_version([entry], "m") == fp.legacy_advertised_version([entry], "m") == "2026-12-01"
    assert fp.advertised_version([entry], "other") == "absent"


def test_a_partition_registered_under_the_old_rule_is_still_read(monkeypatch):
    """TGI's created is 0, so its old key was stable: a partition (or a sensor cursor) holding it
    is this version, not a new one."""
    document = _probe(monkeypatch, _as_served(_recorded("tgi"), "tgi"), SERVERS["tgi"])
    old = fp.legacy_version_key(document)
    assert old is not None and old.startswith(fp.LEGACY_PREFIX) and old != document["version_key"]
    outcome = rules.fingerprint_matches_partition(document, partition_safe(old))
    assert outcome.passed and outcome.metadata["matched_by_legacy_key"] == old
    assert fp.unseen({"c": [old]}, {"c": document["version_key"]}, {"c": old}) == []
    assert fp.unseen({"c": ["other"]}, {"c": document["version_key"]}, {"c": old}) == [("c", document["version_key"])]
    cursor: dict[str, list[str]] = {"c": [old]}  # the sensor's cursor from before issue 26
    assert fp.remember(cursor, {"c": document["version_key"]}, {"c": old}) == []
    assert cursor == {"c": [old, document["version_key"]]}  # read directly from the next tick on
    assert fp.remember(cursor, {"c": "v2+x"}, {"c": None}) == [("c", "v2+x")] and cursor["c"][-1] == "v2+x"
    # a document written before the field: no old key to read, the current rule alone
    del document["legacy_version_key"]
    assert fp.legacy_version_key(document) is None


def test_a_mismatch_says_both_keys_what_differs_and_what_to_do(monkeypatch):
    document = _probe(monkeypatch, _as_served(_recorded("llama_server"), "llama_server"), SERVERS["llama_server"])
    served = document["version_key"]
    version, replies = served.split("+")
    other_replies = rules.fingerprint_matches_partition(document, partition_safe(f"{version}+0123456789ab"))
    assert not other_replies.passed
    explanation = other_replies.metadata["explanation"]
    assert explanation.startswith(
        f"the partition was probed as {version}+0123456789ab, the replay's probe found {served}"
    )
    assert "fields that differ: the replies to the fixed greedy probe prompts (hash 0123456789ab → " in explanation
    assert "advertised version" not in explanation and "what to do: " in explanation
    old_rule = rules.fingerprint_matches_partition(document, f"entry-14ab2bf29576+{replies}")
    text = old_rule.metadata["explanation"]
    assert "the advertised version (entry-14ab2bf29576 → stable-" in text and "`created`" in text
    assert "owned_by=llamacpp" in text and "probe prompts" not in text and "run again" in text
    assert rules.fingerprint_matches_partition(document, partition_safe(served)).passed
