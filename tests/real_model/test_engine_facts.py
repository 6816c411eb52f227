"""The engine section read from a real llama.cpp server (`llama-server`, Gemma 3 270M Q4_K_M, four
slots): its /props says the quantisation and the slots, the fingerprint records them, and two
fingerprints of the unchanged server give one version key. Beside a bf16 claim, the proxy verdict's
rows call the candidate a different model.

Needs the `model` extra (`make real-model`); skipped cleanly without it.
"""

from __future__ import annotations

from pipeline.pack.assemble.served_precision import served_precision_rows
from pipeline.reference.llama_server import MODEL_ALIAS, LlamaServer
from pipeline.replay.endpoint.fingerprint import fingerprint, version_key
from pipeline.replay.pacing.engine import Target
from tests.support.real_engine import REAL_MODEL_MARKS

pytestmark = REAL_MODEL_MARKS


def test_the_live_server_says_its_quantisation_and_slots(llama: LlamaServer) -> None:
    target = Target("gemma-local", llama.base_url, MODEL_ALIAS)
    one, two = fingerprint(target), fingerprint(target)
    engine = one["engine"]
    assert engine is not None and engine["source"] == "llama.cpp /props" and engine["server"] == "llama.cpp"
    assert (engine["quantization"], engine["precision"], engine["weight_bits"]) == ("Q4_K - Medium", "q4_k_m", 4)
    assert engine["slots"] == 4 and engine["context_per_slot"] == llama.n_ctx
    assert two["engine"] == engine
    assert version_key(one) == version_key(two) and one["fingerprint_sha256"] == two["fingerprint_sha256"]
    (row,) = served_precision_rows("bf16", [one])
    assert row["different_model"] and "a different model" in row["reason"]
