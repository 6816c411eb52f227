"""Scorers for the buyer's labelled slice: each turns a reply into (predicted, correct).

- exact: the reply, stripped of surrounding whitespace, equals the label.
- normalised: equal after `normalise` (case, punctuation, `_`/`-`, repeated spaces ignored).
- regex: the first group of the spec's pattern (first match) is the answer, compared normalised.
- choice: the reply names exactly one of the labels (normalised, as whole words); that label is
  the answer. A reply naming several is ambiguous, naming none is unanswered: both are wrong.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

NO_ANSWER = "(no answer)"
AMBIGUOUS = "(ambiguous)"
ERROR = "(error)"

_PUNCTUATION = re.compile(r"[^\w\s]|_")
_SPACES = re.compile(r"\s+")

Scorer = Callable[[str, str], tuple[str, bool]]  # (reply, label) -> (predicted, correct)


def normalise(text: str) -> str:
    """Case-folded, accents kept, punctuation and underscores as spaces, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", _PUNCTUATION.sub(" ", text)).strip()


def exact(reply: str, label: str) -> tuple[str, bool]:
    predicted = reply.strip()
    return predicted or NO_ANSWER, predicted == label


def normalised(reply: str, label: str) -> tuple[str, bool]:
    predicted = normalise(reply)
    return predicted or NO_ANSWER, predicted == normalise(label)


def regex_scorer(pattern: str) -> Scorer:
    compiled = re.compile(pattern)

    def score(reply: str, label: str) -> tuple[str, bool]:
        match = compiled.search(reply)
        if match is None or match.group(1) is None:
            return NO_ANSWER, False
        predicted = match.group(1).strip()
        return predicted, normalise(predicted) == normalise(label)

    return score


def choice_scorer(labels: Sequence[str]) -> Scorer:
    """The one label the reply names; a label inside a longer named label does not count."""
    forms = {label: normalise(label) for label in labels}

    def score(reply: str, label: str) -> tuple[str, bool]:
        padded = f" {normalise(reply)} "
        named = [name for name, form in forms.items() if form and f" {form} " in padded]
        named = [
            name
            for name in named
            if not any(forms[name] != forms[other] and f" {forms[name]} " in f" {forms[other]} " for other in named)
        ]
        if not named:
            return NO_ANSWER, False
        if len(named) > 1:
            return AMBIGUOUS, False
        return named[0], named[0] == label

    return score


def make_scorer(kind: str, labels: Sequence[str], pattern: str | None = None) -> Scorer:
    if kind == "exact":
        return exact
    if kind == "normalised":
        return normalised
    if kind == "regex":
        if not pattern:
            raise ValueError("the regex scorer needs a pattern")
        return regex_scorer(pattern)
    if kind == "choice":
        return choice_scorer(labels)
    raise ValueError(f"unknown scorer {kind!r}")
