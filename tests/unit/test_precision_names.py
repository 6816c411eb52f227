"""One name per weight precision: the claim's, the spec's and the server's names meet on the same
canonical name and bits (pipeline/precision_names.py)."""

from __future__ import annotations

import pytest

from pipeline.precision_names import Precision, describe, precision_of


@pytest.mark.parametrize(
    ("written", "name", "bits"),
    [
        # llama.cpp's file types (`model_ftype` in /props, `meta.ftype` in /v1/models)
        ("Q4_K - Medium", "q4_k_m", 4),
        ("Q4_K - Small", "q4_k_s", 4),
        ("Q3_K - Large", "q3_k_l", 3),
        ("Q5_K - Medium (guessed)", "q5_k_m", 5),
        ("Q6_K", "q6_k", 6),
        ("Q8_0", "q8_0", 8),
        ("IQ4_XS - 4.25 bpw", "iq4_xs", 4),
        ("IQ3_S mix - 3.66 bpw", "iq3_s", 3),
        ("MXFP4 MoE", "mxfp4", 4),
        ("all F32", "fp32", 32),
        ("F16", "fp16", 16),
        ("BF16", "bf16", 16),
        # the same quantisation as a claim writes it
        ("Q4_K_M", "q4_k_m", 4),
        ("q4_k_m", "q4_k_m", 4),
        # dtypes and quantisation methods (vLLM, SGLang, result files, specs)
        ("bfloat16", "bf16", 16),
        ("float16", "fp16", 16),
        ("half", "fp16", 16),
        ("FP8", "fp8", 8),
        ("fp8_e4m3", "fp8", 8),
        ("fp8-e5m2", "fp8", 8),
        ("int8", "int8", 8),
        ("W8A8", "int8", 8),
        ("int4", "int4", 4),
        ("W4A16", "int4", 4),
        ("4-bit", "int4", 4),
        ("awq", "awq", 4),
        ("AWQ_Marlin", "awq", 4),
        ("gptq", "gptq", 4),
        ("bitsandbytes", "nf4", 4),
        ("nvfp4", "nvfp4", 4),
    ],
)
def test_each_name_meets_its_canonical_name_and_bits(written, name, bits):
    assert precision_of(written) == Precision(name, bits)


@pytest.mark.parametrize("written", [None, "", "  ", "auto", "None", "mystery-format"])
def test_a_name_that_names_no_precision_is_none(written):
    assert precision_of(written) is None


def test_described_in_words():
    assert describe(Precision("q4_k_m", 4)) == "q4_k_m (4-bit weights)"
    assert describe(Precision("q4_k_m", 4), "Q4_K - Medium") == "Q4_K - Medium (q4_k_m, 4-bit weights)"
    assert describe(Precision("bf16", 16), "BF16") == "BF16 (16-bit weights)"
