"""Accuracy oracle for the reference endpoint: given an answer key (a labelled slice), a prompt
that contains one of the key's texts is answered with that item's label with a configured
probability (per label, or a default), otherwise with another label of the key. The draw is
seeded by the prompt's sha256, so the same prompt always gets the same answer, and a measured
accuracy can be compared with a known truth: the expected accuracy is the mean probability.

A profile enables it with an `oracle:` section (`OracleConfig`, in `serving_profile.py` with the
profile's other sections), or `--oracle FILE` at launch:

    oracle:
      answer_key: ../data/banking77_slice.csv   # CSV or JSONL, relative to the YAML file
      text_field: text
      label_field: label
      accuracy: 0.9                             # default probability of a correct answer
      per_label: {card_arrival: 0.6}            # overrides for some labels
      seed: 0
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from pathlib import Path

from pipeline.reference.generation import GenerationRequest, Reply, Writer, split_into_pieces
from pipeline.reference.serving_profile import OracleConfig


def read_answer_key(config: OracleConfig) -> list[tuple[str, str]]:
    """(text, label) pairs of the answer key, in file order."""
    path = Path(config.answer_key)
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix.lower() == ".csv":
            records = list(csv.DictReader(handle))
        else:
            records = [json.loads(line) for line in handle if line.strip()]
    pairs = []
    for number, record in enumerate(records, start=1):
        text, label = record.get(config.text_field), record.get(config.label_field)
        if not text or not label:
            raise ValueError(f"{path}: record {number}: needs {config.text_field} and {config.label_field}")
        pairs.append((str(text), str(label)))
    return pairs


class Oracle:
    """Answers prompts that contain an answer-key text; None for any other prompt."""

    def __init__(self, config: OracleConfig) -> None:
        self.config = config
        self.key: dict[str, str] = {}
        for text, label in read_answer_key(config):
            self.key.setdefault(text, label)
        self.labels = sorted(set(self.key.values()))
        # longest first: a text inside a longer one must not shadow it
        self._texts = sorted(self.key, key=len, reverse=True)

    def find(self, prompt: str) -> str | None:
        """The answer-key text that the prompt contains (the longest one), if any."""
        if prompt in self.key:
            return prompt
        return next((text for text in self._texts if text in prompt), None)

    def answer(self, messages: list[dict]) -> str | None:
        prompt = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
        text = self.find(prompt)
        if text is None:
            return None
        label = self.key[text]
        digest = hashlib.sha256(prompt.encode("utf-8")).digest()
        rng = random.Random(self.config.seed * 1_000_003 + int.from_bytes(digest[:8], "big"))
        if rng.random() < self.config.probability(label) or len(self.labels) < 2:
            return label
        return rng.choice([other for other in self.labels if other != label])


def oracle_writer(config: OracleConfig, fallback: Writer) -> Writer:
    """A writer that answers prompts containing an answer-key text through the oracle (one
    token per piece, cut at `max_tokens`) and every other prompt through `fallback`."""
    oracle = Oracle(config)

    def write(request: GenerationRequest) -> Reply:
        if request.kind == "chat":
            answer = oracle.answer(request.messages or [])
        else:
            answer = oracle.answer([{"role": "user", "content": request.prompt or ""}])
        if answer is None:
            return fallback(request)
        pieces = split_into_pieces(answer)
        kept = pieces[: max(request.max_tokens, 0)]
        return Reply(kept, "stop" if len(kept) == len(pieces) else "length")

    return write
