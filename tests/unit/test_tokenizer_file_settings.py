"""A tokenizer.json that sets truncation and padding (BERT's family ships them at the model's input
size) counts every token of a text: `hf:` ignores the file's truncation and padding when counting,
so a long reply is not cut to 128 and a short one is not padded to 128, and prompts fitted under
such a file land on the requested lengths."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.plan.prompt_tokenizer import prompts_tokenizer
from pipeline.plan.replay_plan import build_plan, prompt_fit_summary
from pipeline.plan.synthetic_prompts import PUNCTUATION, WORDS, fit_messages, render, word_stream
from pipeline.spec.workload import Prompts, Replay
from pipeline.tokens.tokenizers import HfTokenizer, Templated

MODEL_INPUT = 128  # what the file pads and truncates to, like bert-base's max_length 128 exports


@pytest.fixture(scope="module")
def bert_style_json(tmp_path_factory) -> Path:
    """A small BERT-style tokenizer.json built here (no hub): WordPiece with BERT's normalizer,
    pre-tokenizer and [CLS] … [SEP] post-processor, saved with truncation and padding at 128."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=90, special_tokens=specials)
    tokenizer.train_from_iterator([" ".join(WORDS), " ".join(PUNCTUATION)] * 4, trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tokenizer.enable_truncation(max_length=MODEL_INPUT)
    tokenizer.enable_padding(length=MODEL_INPUT, pad_id=tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")
    path = tmp_path_factory.mktemp("bert") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def _unbounded(path: Path, text: str) -> int:
    """The text's tokens with the file's truncation and padding turned off by hand."""
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(path))
    raw.no_truncation()
    raw.no_padding()
    return len(raw.encode(text, add_special_tokens=False).ids)


def test_the_file_really_pads_and_truncates(bert_style_json: Path):
    """The fixture is the case the bug needs: read as saved, every text encodes to 128 ids."""
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(bert_style_json))
    assert raw.truncation is not None and raw.truncation["max_length"] == MODEL_INPUT
    assert raw.padding is not None and raw.padding["length"] == MODEL_INPUT
    for text in ("refund", render(word_stream("long", 600))):
        assert len(raw.encode(text, add_special_tokens=False).ids) == MODEL_INPUT


def test_counts_are_the_untruncated_unpadded_encoding(bert_style_json: Path):
    hf = HfTokenizer(bert_style_json)
    long_text, short_text = render(word_stream("reply", 600)), render(word_stream("short", 4))
    long_count, short_count = hf.count_text(long_text), hf.count_text(short_text)
    assert long_count == _unbounded(bert_style_json, long_text) > MODEL_INPUT
    assert short_count == _unbounded(bert_style_json, short_text) < 32


def test_prompts_fit_within_2_percent_under_such_a_file(bert_style_json: Path):
    tokenizer = Templated(HfTokenizer(bert_style_json), template_tokens=3)
    for target in (12, 57, 300, 1024, 4000):
        messages, achieved = fit_messages(target, f"seed{target}", tokenizer)
        content = messages[0]["content"]
        assert achieved == tokenizer.count_messages(messages) == _unbounded(bert_style_json, content) + 3
        assert abs(achieved - target) <= 0.02 * target, (target, achieved)


def test_a_plan_under_such_a_file_fits_every_prompt(bert_style_json: Path):
    prompts = Prompts(tokenizer="hf:tokenizer.json", template_tokens=3)
    tokenizer = prompts_tokenizer(prompts, lambda relative: bert_style_json.parent / relative)
    lengths = [40, 130, 400, 1500, 3000]
    sample = pa.table(
        {
            "request_id": [f"r{i}" for i in range(len(lengths))],
            "window_offset_s": [float(i) for i in range(len(lengths))],
            "messages_json": pa.array([None] * len(lengths), pa.string()),
            "prompt_tokens": lengths,
            "output_tokens": [5] * len(lengths),
            "source_line": list(range(1, len(lengths) + 1)),
        }
    )
    plan = build_plan(sample, Replay(), prompts, tokenizer)
    summary = prompt_fit_summary(plan, tokenizer)
    assert summary["synthetic"]["requests"] == len(lengths)
    assert summary["synthetic"]["within_1pct"] == len(lengths), summary
