"""The reference endpoint: an OpenAI-compatible server (chat and text completions, Responses; SSE)
whose timing follows the serving model of its `ServingProfile`, with faults on demand and a
ground-truth timeline of every request.

Routes: `GET /health`, `GET /metrics` (Prometheus text, vLLM's names: engine_metrics.py),
`GET /v1/models[/{id}]`, `POST /v1/chat/completions`,
`POST /v1/completions`, `POST /v1/responses` (the Responses API's typed events: responses_wire.py),
`POST /admin/version` (`{"version": "..."}`: what /v1/models reports
from then on, for a new-version sensor).

This module holds the app and its routes; each completion request is answered by `completion.py`.
The content of a reply comes from a writer (`generation.py`; default: seeded words, exactly
`max_tokens` of them unless a `stop` string cuts them); its timing from the engine loop
(`serving_loop.py`), except for an *instant* profile (`zero`: no cost, no bound), which streams
at once without the engine (the zero-delay echo used for client calibration).
"""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.reference.completion import ARRIVAL_KEY, Completion, ReferenceState
from pipeline.reference.engine_metrics import engine_registry, exposition
from pipeline.reference.faults import ABORT_KEY, FaultPicker, transport_aborter
from pipeline.reference.generation import Writer, default_writer
from pipeline.reference.openai_wire import error_response
from pipeline.reference.oracle import oracle_writer
from pipeline.reference.serving_loop import EngineLoop
from pipeline.reference.serving_profile import ServingProfile
from pipeline.reference.timeline import TimelineWriter

PROFILE_HEADER = "x-reference-profile"


class _ReferenceApp(Starlette):
    """Starlette, stamping each HTTP request's arrival (monotonic and wall clock) the moment the
    server hands it over, and keeping a way to reset its connection (for faults)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[ARRIVAL_KEY] = (time.perf_counter_ns(), time.time_ns())
            abort = transport_aborter(send)
            if abort is not None:
                scope[ABORT_KEY] = abort
        await super().__call__(scope, receive, send)


class _ProfileHeader:
    """ASGI middleware: every HTTP response names the serving profile (`x-reference-profile`)."""

    def __init__(self, app: ASGIApp, name: str) -> None:
        self.app = app
        self.value = name.encode("latin-1", "replace")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), (PROFILE_HEADER.encode(), self.value)]
            await send(message)

        await self.app(scope, receive, send_with_header)


def build_app(
    profile: ServingProfile, *, writer: Writer = default_writer, timeline_path: str | Path | None = None
) -> Starlette:
    """A Starlette app serving the reference endpoint for `profile`; see the module docstring.
    A profile with an `oracle:` section answers the answer key's prompts through `writer`'s oracle."""
    if profile.oracle is not None:
        writer = oracle_writer(profile.oracle, writer)
    state = ReferenceState(
        profile=profile,
        writer=writer,
        timeline=TimelineWriter(timeline_path),
        faults=FaultPicker(profile),
        engine=None if profile.instant else EngineLoop(profile),
        version=profile.version,
    )

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    engine = state.engine
    registry = engine_registry(profile.model, lambda: None if engine is None else (engine.core, engine.pending))

    async def metrics(request: Request) -> Response:
        body, content_type = exposition(registry)
        return Response(body, media_type=content_type)

    def card() -> dict:
        return {
            "id": profile.model,
            "object": "model",
            "created": state.version_created,
            "owned_by": "loadproof",
            "version": state.version,
        }

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [card()]})

    async def model(request: Request) -> Response:
        if request.path_params["model"] != profile.model:
            return error_response(
                404,
                f"The model `{request.path_params['model']}` does not exist.",
                "invalid_request_error",
                "model",
                "model_not_found",
            )
        return JSONResponse(card())

    async def set_version(request: Request) -> Response:
        try:
            version = (await request.json())["version"]
            if not isinstance(version, str) or not version:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return error_response(
                400,
                'body must be {"version": "<non-empty string>"}',
                "invalid_request_error",
                "version",
                "invalid_value",
            )
        state.version, state.version_created = version, int(time.time())
        return JSONResponse(card())

    async def chat_completions(request: Request) -> Response:
        return await Completion(state, request, "chat").respond()

    async def completions(request: Request) -> Response:
        return await Completion(state, request, "completion").respond()

    async def responses(request: Request) -> Response:
        return await Completion(state, request, "responses").respond()

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        return error_response(
            status,
            f"{request.method} {request.url.path}: {getattr(exc, 'detail', 'error')}",
            "invalid_request_error",
            None,
            "not_found" if status == 404 else "method_not_allowed" if status == 405 else None,
        )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if state.engine is not None:
            state.engine.start()
        # what start-up built (the imports, the profile, the engine) out of the collector's sight:
        # its first full collections otherwise stall every request in flight for 100+ ms under
        # load (bench/CHANGELOG.md, "Whose stall"), as the replay client already does (engine.py)
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            if state.engine is not None:
                await state.engine.stop()
            state.timeline.close()

    app = _ReferenceApp(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model:path}", model, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/admin/version", set_version, methods=["POST"]),
        ],
        exception_handlers={404: http_error, 405: http_error},
        lifespan=lifespan,
    )
    app.state.profile = profile
    app.state.reference = state
    app.state.engine = state.engine
    app.add_middleware(_ProfileHeader, name=profile.name)
    return app
