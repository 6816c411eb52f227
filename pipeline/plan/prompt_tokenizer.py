"""The tokenizer a plan's prompts are fitted under, from `workload.prompts` (tokenizer,
template_tokens) and, where one is needed, a candidate to ask.

A real tokenizer counts text; the server counts the chat template's tokens too. So unless the
spec gives `template_tokens`, the overhead is measured once here, before any replay: one
non-streamed one-token completion to the tokenizer's server (`server`) or the first candidate
(`hf:`, `gguf:`). A plan is shared by every candidate: its prompts are fitted to one model's count,
and a candidate with another tokenizer sees other lengths (the pack's token agreement shows it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pipeline.replay.pacing.engine import Target
from pipeline.spec import LoadedSpec
from pipeline.spec.candidates import Candidate
from pipeline.spec.workload import Prompts
from pipeline.tokens.server_tokenize import ServerTokenizer, measure_template_tokens, server_root
from pipeline.tokens.tokenizers import (
    APPROX,
    SPEC_FIELD,
    ApproxTokenizer,
    Templated,
    Tokenizer,
    TokenizerError,
    load_tokenizer,
    resolve_setting,
)


def _candidate(candidates: Sequence[Candidate], name: str | None):
    if not candidates:
        raise TokenizerError(f"{SPEC_FIELD}: {name or 'server'}: the spec has no candidate to ask")
    if name is None:
        return candidates[0]
    for candidate in candidates:
        if candidate.name == name:
            return candidate
    raise TokenizerError(
        f"{SPEC_FIELD}: server:{name}: no candidate of that name ({', '.join(c.name for c in candidates)})"
    )


def plan_tokenizer(loaded: LoadedSpec, target_for: Callable[[Candidate], Target] | None = None) -> Tokenizer:
    """The tokenizer a loaded spec names (`workload.prompts`; a relative path against its folder;
    `target_for` makes a candidate's target, API key included)."""
    spec = loaded.spec
    return prompts_tokenizer(spec.workload.prompts, loaded.resolve, spec.candidates, target_for)


def prompts_tokenizer(
    prompts: Prompts,
    resolve_path: Callable[[str], Path] = Path,
    candidates: Sequence[Candidate] = (),
    target_for: Callable[[Candidate], Target] | None = None,
) -> Tokenizer:
    """The tokenizer `prompts` names, ready to fit chats: loadproof-approx as it is; a real one
    with its chat-template overhead (`Templated`), given or measured (module docstring). Errors
    name the spec field."""
    if prompts.tokenizer == APPROX:
        return ApproxTokenizer()
    kind, _, name = prompts.tokenizer.partition(":")
    target: Target | None = None
    if kind == "server" or prompts.template_tokens is None:
        if target_for is None:
            raise TokenizerError(f"{SPEC_FIELD}: {prompts.tokenizer} needs a candidate to ask (or template_tokens)")
        target = target_for(_candidate(candidates, name if kind == "server" and name else None))
    tokenizer: Tokenizer
    if kind == "server":
        assert target is not None
        resolve_setting(prompts.tokenizer, resolve_path, server_root(target.base_url))  # the field's own checks
        tokenizer = ServerTokenizer(server_root(target.base_url), target.headers(), target.model)
    else:
        tokenizer = load_tokenizer(resolve_setting(prompts.tokenizer, resolve_path))
    if prompts.template_tokens is not None:
        return Templated(tokenizer, prompts.template_tokens)
    assert target is not None
    return Templated(tokenizer, measure_template_tokens(tokenizer, target.chat_url, target.model, target.headers()))


def tokenizer_record(tokenizer: Tokenizer) -> dict:
    """What the plan's metadata says about the tokenizer: its name, the setting the replay loads,
    the template overhead added and, for a server, which tokenize endpoint answered."""
    inner = getattr(tokenizer, "tokenizer", tokenizer)
    return {
        "name": tokenizer.name,
        "setting": getattr(tokenizer, "setting", tokenizer.name),
        "template_tokens": getattr(tokenizer, "template_tokens", None),
        "tokenize_endpoint": getattr(inner, "dialect", None),
    }
