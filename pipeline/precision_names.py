"""One name per weight precision, whoever wrote it: a claim (`bf16`), a spec (`BF16`), llama.cpp's
`/props` (`Q4_K - Medium`), SGLang's server args (`awq`, `fp8`), a vendor's result file
(`bfloat16`). The proxy verdict compares the claim's precision with the one the candidate serves,
and the names differ more than the weights do; what decides is the bits a weight is stored in.

A leaf (standard library only): the replay records the served precision in the endpoint
fingerprint, the pack compares it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    name: str  # the canonical name: bf16, fp8, int4, q4_k_m, awq, ...
    weight_bits: int  # the bits a weight is stored in (a GGUF k-quant's nominal width)


# alias → (canonical name, weight bits). Quantisation methods that store 4-bit weights (AWQ, GPTQ,
# bitsandbytes' nf4, MXFP4, NVFP4) are 4-bit; FP8 schemes 8-bit; "auto" (the model's own dtype,
# vLLM's and SGLang's default) names no precision and is absent on purpose.
PRECISIONS: dict[str, tuple[str, int]] = {
    "fp32": ("fp32", 32),
    "float32": ("fp32", 32),
    "f32": ("fp32", 32),
    "all f32": ("fp32", 32),
    "bf16": ("bf16", 16),
    "bfloat16": ("bf16", 16),
    "fp16": ("fp16", 16),
    "float16": ("fp16", 16),
    "f16": ("fp16", 16),
    "half": ("fp16", 16),
    "fp8": ("fp8", 8),
    "float8": ("fp8", 8),
    "fp8_e4m3": ("fp8", 8),
    "fp8_e5m2": ("fp8", 8),
    "fbgemm_fp8": ("fp8", 8),
    "modelopt": ("fp8", 8),
    "w8a8": ("int8", 8),
    "w8a8_int8": ("int8", 8),
    "int8": ("int8", 8),
    "smoothquant": ("int8", 8),
    "q8_0": ("q8_0", 8),
    "int4": ("int4", 4),
    "w4a16": ("int4", 4),
    "awq": ("awq", 4),
    "awq_marlin": ("awq", 4),
    "gptq": ("gptq", 4),
    "gptq_marlin": ("gptq", 4),
    "bitsandbytes": ("nf4", 4),
    "nf4": ("nf4", 4),
    "mxfp4": ("mxfp4", 4),
    "mxfp4 moe": ("mxfp4", 4),
    "nvfp4": ("nvfp4", 4),
    "modelopt_fp4": ("nvfp4", 4),
    "fp4": ("fp4", 4),
    "4bit": ("int4", 4),
    "4_bit": ("int4", 4),
    "8bit": ("int8", 8),
    "8_bit": ("int8", 8),
}
# llama.cpp's file types by pattern (`llama_model_ftype_name`): `Q4_K - Medium` → q4_k_m,
# `IQ4_XS - 4.25 bpw` → iq4_xs, `Q5_0` → q5_0; the digit after Q or IQ is the weight's width
GGUF_QUANT = re.compile(r"^(?P<name>(?:i?q|tq)(?P<bits>\d)(?:_[a-z0-9]+)*)(?: (?:mix )?- (?P<size>[a-z]+))?")
GGUF_SIZES = {"small": "s", "medium": "m", "large": "l"}


def precision_of(name: str | None) -> Precision | None:
    """The precision `name` stands for; None where it names none (absent, "auto", unknown)."""
    if not name or not name.strip():
        return None
    text = name.strip().lower().removesuffix(" (guessed)")
    text = " ".join(text.split())
    if text in PRECISIONS:
        return Precision(*PRECISIONS[text])
    underscored = text.replace("-", "_").replace(" ", "_")
    if underscored in PRECISIONS:
        return Precision(*PRECISIONS[underscored])
    gguf = GGUF_QUANT.match(text)
    if gguf is None:
        return None
    size = gguf.group("size")
    suffix = "_" + GGUF_SIZES[size] if size in GGUF_SIZES else ""
    return Precision(gguf.group("name") + suffix, int(gguf.group("bits")))


def describe(precision: Precision, written: str | None = None) -> str:
    """What the verdict's words name: `Q4_K - Medium (q4_k_m, 4-bit weights)` as the server wrote
    it, `bf16 (16-bit weights)` where the written name is the canonical one."""
    if not written or written.strip().lower() == precision.name:
        return f"{written.strip() if written else precision.name} ({precision.weight_bits}-bit weights)"
    return f"{written.strip()} ({precision.name}, {precision.weight_bits}-bit weights)"
