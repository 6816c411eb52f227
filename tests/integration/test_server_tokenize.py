"""`workload.prompts.tokenizer: server`: the candidate's own tokenize endpoint is probed over HTTP
on loopback in each shape loadproof knows (vLLM, llama.cpp's server, TGI), the one that answered
is named, a server with none is a clear error naming the spec field, and the chat template's
overhead is measured from one non-streamed completion's usage."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pipeline.plan.prompt_tokenizer import prompts_tokenizer
from pipeline.replay.pacing.engine import Target
from pipeline.spec.candidates import Candidate
from pipeline.spec.workload import Prompts
from pipeline.tokens.server_tokenize import ServerTokenizer, measure_template_tokens
from pipeline.tokens.tokenizers import TokenizerError

TEMPLATE = 6  # what each fake server's chat template adds around one user message


def words(text: str) -> list[str]:
    return text.split()


def vllm_tokenize(body: dict):
    return {"count": len(words(body["prompt"])), "tokens": list(range(len(words(body["prompt"])))), "max_model_len": 9}


def llama_cpp_tokenize(body: dict):
    return {"tokens": list(range(len(words(body.get("content", "")))))}  # no content: no tokens, HTTP 200


def tgi_tokenize(body: dict):
    return [{"id": i, "text": w, "start": 0, "stop": 0} for i, w in enumerate(words(body["inputs"]))]


def app_for(tokenize) -> Starlette:
    async def tokenize_route(request: Request) -> JSONResponse:
        try:
            return JSONResponse(tokenize(await request.json()))
        except KeyError:
            return JSONResponse({"error": "missing field"}, status_code=422)

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        prompt = sum(len(words(m["content"])) for m in body["messages"]) + TEMPLATE
        return JSONResponse({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": 1}})

    routes = [Route("/v1/chat/completions", chat, methods=["POST"])]
    if tokenize is not None:
        routes.append(Route("/tokenize", tokenize_route, methods=["POST"]))
    return Starlette(routes=routes)


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """The app on a loopback port bound before the server starts (a connection made before it
    accepts waits in the listen backlog: no polling)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.mark.parametrize(
    ("tokenize", "dialect"), [(vllm_tokenize, "vllm"), (llama_cpp_tokenize, "llama.cpp"), (tgi_tokenize, "tgi")]
)
def test_each_servers_tokenize_endpoint_is_found_and_named(tokenize, dialect: str) -> None:
    with serving(app_for(tokenize)) as root:
        tokenizer = ServerTokenizer(root, model="m")
        assert (tokenizer.dialect, tokenizer.name) == (dialect, f"server:{dialect}")
        assert tokenizer.count_text("one two three") == 3
        assert measure_template_tokens(tokenizer, f"{root}/v1/chat/completions", "m") == TEMPLATE


def test_the_plan_fits_under_the_servers_count_with_its_template() -> None:
    with serving(app_for(vllm_tokenize)) as root:
        candidate = Candidate.model_validate(
            {"name": "vendor", "base_url": f"{root}/v1", "model": "m", "price": {"usd_per_hour": 1.0}}
        )
        tokenizer = prompts_tokenizer(
            Prompts(tokenizer="server:vendor"),
            candidates=[candidate],
            target_for=lambda c: Target(c.name, c.base_url, c.model),
        )
        assert tokenizer.template_tokens == TEMPLATE  # type: ignore[attr-defined]
        assert tokenizer.count_messages([{"role": "user", "content": "a b c"}]) == 3 + TEMPLATE


def test_a_server_without_a_tokenize_endpoint_is_an_error_naming_the_field() -> None:
    with serving(app_for(None)) as root, pytest.raises(TokenizerError) as raised:
        ServerTokenizer(root)
    message = str(raised.value)
    assert message.startswith("workload.prompts.tokenizer: server:") and "no tokenize endpoint" in message
    assert "/tokenize as vllm: HTTP 404" in message and "hf:PATH, gguf:PATH" in message
