"""The labelled slice, the scorers, the accuracy replay against the reference endpoint's oracle,
and the accuracy tables (Wilson interval, delta to the claim, confusion)."""

import json
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.accuracy.client import replay_slice
from pipeline.accuracy.labelled_slice import SliceError, load_slice, score_replies
from pipeline.accuracy.scorers import AMBIGUOUS, NO_ANSWER, choice_scorer, exact, normalise, normalised, regex_scorer
from pipeline.analysis.tabulate import tables
from pipeline.reference import ReferenceServer
from pipeline.reference.oracle import Oracle
from pipeline.reference.serving_profile import OracleConfig
from pipeline.replay.pacing.engine import Target
from pipeline.spec import Spec
from pipeline.spec.accuracy import AccuracySlice
from tests.support.specs import DEMO_SLICE, demo_spec_dict

LABELS = ["card_arrival", "exchange_rate", "card_payment_wrong_exchange_rate"]


def config(**overrides) -> AccuracySlice:
    values = {"path": "x.csv", "prompt_template": "Intents: {labels}\nMessage: {text}", "id_field": "id"}
    return AccuracySlice.model_validate({**values, **overrides})


def test_scorers_by_hand():
    assert exact(" card_arrival\n", "card_arrival") == ("card_arrival", True)
    assert exact("Card_arrival", "card_arrival")[1] is False
    assert normalise("  Card-Arrival!! ") == "card arrival"
    assert normalised("Card arrival.", "card_arrival") == ("card arrival", True)
    score = regex_scorer(r"intent:\s*(\w+)")
    assert score("The intent: exchange_rate, I think", "exchange_rate") == ("exchange_rate", True)
    assert score("no idea", "exchange_rate") == (NO_ANSWER, False)


def test_choice_scorer_takes_the_one_label_named_and_prefers_the_longer():
    score = choice_scorer(LABELS)
    assert score("It is card_payment_wrong_exchange_rate.", "card_payment_wrong_exchange_rate") == (
        "card_payment_wrong_exchange_rate",
        True,
    )  # exchange_rate inside the longer label is not a second answer
    assert score("Exchange rate", "exchange_rate") == ("exchange_rate", True)
    assert score("card_arrival or exchange_rate", "card_arrival") == (AMBIGUOUS, False)
    assert score("alpha bravo", "card_arrival") == (NO_ANSWER, False)


def test_slice_loading_renders_prompts_and_names_bad_lines(tmp_path: Path):
    good = tmp_path / "slice.jsonl"
    good.write_text(
        '{"id": "a", "text": "Where is my card?", "label": "card_arrival"}\n\n'
        '{"id": "b", "text": "Rate?", "label": "exchange_rate"}\n'
    )
    table = load_slice(config(path=str(good)), good)
    assert table.column("item_id").to_pylist() == ["a", "b"]
    messages = json.loads(table.column("messages_json")[0].as_py())
    assert messages == [{"role": "user", "content": "Intents: card_arrival, exchange_rate\nMessage: Where is my card?"}]
    assert table.column("source_line").to_pylist() == [1, 3]

    bad = tmp_path / "bad.csv"
    bad.write_text("id,text,label\n1,Where is my card?,card_arrival\n2,,exchange_rate\n")
    with pytest.raises(SliceError, match=r"bad\.csv:3: text: missing or empty"):
        load_slice(config(path=str(bad)), bad)
    duplicate = tmp_path / "dup.csv"
    duplicate.write_text("id,text,label\n1,a,x\n1,b,y\n")
    with pytest.raises(SliceError, match=r"dup\.csv:3: id: duplicate id '1' \(first on line 2\)"):
        load_slice(config(path=str(duplicate)), duplicate)


def test_spec_refuses_a_template_without_text_and_a_regex_without_group():
    with pytest.raises(ValueError, match=r"must contain \{text\}"):
        config(prompt_template="Answer: {labels}")
    with pytest.raises(ValueError, match=r"unknown template field\(s\) \['txt'\]"):
        config(prompt_template="{text} {txt}")
    with pytest.raises(ValueError, match="capture group"):
        config(scorer="regex", pattern=r"\w+")


def test_oracle_is_deterministic_and_hits_its_configured_accuracy(tmp_path: Path):
    oracle = Oracle(OracleConfig(answer_key=str(DEMO_SLICE), accuracy=0.8, per_label={"change_pin": 0.0}))
    key = list(oracle.key.items())
    prompt = lambda text: [{"role": "user", "content": f"Classify.\nMessage: {text}"}]  # noqa: E731
    answers = [oracle.answer(prompt(text)) for text, _ in key]
    assert answers == [oracle.answer(prompt(text)) for text, _ in key]  # same prompt, same answer
    assert all(answer in oracle.labels for answer in answers)
    correct = {label: [] for label in oracle.labels}
    for (_text, label), answer in zip(key, answers):
        correct[label].append(answer == label)
    assert not any(correct["change_pin"])  # probability 0 for that label
    others = [hit for label, hits in correct.items() if label != "change_pin" for hit in hits]
    assert 0.7 < sum(others) / len(others) < 0.9  # 175 draws at p = 0.8
    assert oracle.answer([{"role": "user", "content": "nothing from the key"}]) is None


def test_accuracy_replay_against_the_oracle_endpoint(tmp_path: Path):
    oracle_file = tmp_path / "oracle.yaml"
    oracle_file.write_text(f"answer_key: {DEMO_SLICE}\naccuracy: 1.0\n")
    cfg = config(path=str(DEMO_SLICE), max_items=40)
    items = load_slice(cfg, DEMO_SLICE)
    with ReferenceServer("zero", oracle=str(oracle_file)) as server:
        target = Target(candidate="c", base_url=server.base_url, model="reference-model")
        replies = replay_slice(items.to_pylist(), target, max_tokens=16, concurrency=4, timeout_s=10)
        wrong_model = replay_slice(items.to_pylist()[:2], Target("w", server.base_url, "absent"), 16, 2, 10)
    results = score_replies(cfg, items, replies + wrong_model)
    rows = results.to_pylist()
    assert [r["status"] for r in rows[:40]] == ["ok"] * 40
    assert all(r["correct"] for r in rows[:40])  # probability 1: every answer is the label
    assert [(r["error_type"], r["predicted"], r["correct"]) for r in rows[40:]] == [("http_4xx", "(error)", False)] * 2


def test_accuracy_summary_wilson_delta_and_confusion():
    rows = (
        [("a", "x", "x", True)] * 8
        + [("a", "x", "y", False)] * 2
        + [("a", "y", "y", True)] * 6
        + [("a", "y", "(error)", False)] * 4
    )
    results = pa.Table.from_pylist(
        [
            {
                "candidate": c,
                "item_id": str(i),
                "label": label,
                "predicted": p,
                "correct": k,
                "status": "error" if p == "(error)" else "ok",
                "latency_ms": 1.0,
            }
            for i, (c, label, p, k) in enumerate(rows)
        ]
    )
    data = demo_spec_dict()
    data["claim"]["figures"]["accuracy"] = 0.9
    spec = Spec.model_validate(data)
    summary = tables.accuracy_summary(results, spec).to_pylist()[0]
    assert (summary["scored"], summary["correct"], summary["errors"]) == (20, 14, 4)
    assert summary["accuracy"] == pytest.approx(0.7)
    assert summary["accuracy_delta"] == pytest.approx(-0.2)
    # Wilson 14/20 at 95 %: [0.4810, 0.8545] (textbook value)
    assert summary["accuracy_ci_low"] == pytest.approx(0.4810, abs=1e-4)
    assert summary["accuracy_ci_high"] == pytest.approx(0.8545, abs=1e-4)
    assert summary["accuracy_delta_ci_high"] == pytest.approx(0.8545 - 0.9, abs=1e-4)
    by_label = {(r["label"], r["predicted"]): r for r in tables.accuracy_by_label(results, spec).to_pylist()}
    assert by_label[("x", "y")]["items"] == 2 and by_label[("x", "x")]["label_accuracy"] == pytest.approx(0.8)
    assert by_label[("y", "(error)")]["items"] == 4 and by_label[("y", "y")]["label_accuracy"] == pytest.approx(0.6)


def test_a_profile_oracle_section_resolves_its_answer_key_next_to_the_profile(tmp_path: Path):
    from pipeline.reference.serving_profile import load_profile

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "key.csv").write_text("text,label\nWhere is my card?,card_arrival\n")
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "name: p\nprefill_ms_per_token: 0\ndecode_ms_per_token: 0\ndecode_slowdown_per_seq: 0\n"
        "max_running_seqs: 4\noracle:\n  answer_key: data/key.csv\n  accuracy: 1.0\n"
    )
    loaded = load_profile(str(profile))
    assert loaded.oracle.answer_key == str(tmp_path / "data" / "key.csv")
    assert Oracle(loaded.oracle).answer([{"role": "user", "content": "Q: Where is my card?"}]) == "card_arrival"


def test_the_oracle_is_a_writer_wrapping_another_for_chat_and_text_completions():
    from pipeline.reference.generation import GenerationRequest, default_writer
    from pipeline.reference.oracle import oracle_writer
    from pipeline.reference.serving_profile import load_profile

    profile = load_profile("zero")
    write = oracle_writer(OracleConfig(answer_key=str(DEMO_SLICE), accuracy=1.0), default_writer)
    text, label = Oracle(OracleConfig(answer_key=str(DEMO_SLICE))).key.popitem()
    chat = [{"role": "user", "content": f"Classify: {text}"}]
    assert write(GenerationRequest(profile, "chat", chat, None, 16)).text == label
    assert write(GenerationRequest(profile, "completion", None, f"Classify: {text}", 16)).text == label
    cut = write(GenerationRequest(profile, "chat", chat, None, 0))
    assert cut.pieces == [] and cut.finish_reason == "length"
    other = GenerationRequest(profile, "chat", [{"role": "user", "content": "nothing from the key"}], None, 5)
    assert write(other) == default_writer(other)  # every other prompt: the wrapped writer
