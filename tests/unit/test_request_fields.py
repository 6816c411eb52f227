"""The request-field names: one list in Python (pipeline/contracts/request_fields.py) and the same
list, in the same order, where sql/ingest_macros.sql reads them."""

import json
import re

from pipeline.contracts.request_fields import REQUEST_FIELDS
from pipeline.duck.catalog import REPO_QUERIES
from pipeline.plan.replay_plan import request_fields_to_send, tool_definition_tokens
from pipeline.plan.synthetic_prompts import ApproxTokenizer
from pipeline.spec.workload import SetField


def _macro(name: str) -> str:
    text = REPO_QUERIES.text("ingest_macros")
    return text[text.index(f"MACRO {name}(") :].split(";", 1)[0]


def test_the_sql_reads_the_fields_python_names_in_the_same_order():
    assert tuple(re.findall(r"'\"(\w+)\":'", _macro("request_fields_from"))) == REQUEST_FIELDS
    assert tuple(re.findall(r"'\$\.(\w+)'", _macro("request_values_of"))) == REQUEST_FIELDS


def test_rules_keep_drop_and_set_fields_whether_logged_or_not():
    logged = '{"temperature": 0.7, "tools": [{"type": "function"}], "seed": 1}'
    rules = {"temperature": SetField(set=0), "tools": "drop", "seed": "keep", "top_p": SetField(set=1)}
    assert request_fields_to_send(logged, rules) == '{"temperature": 0, "seed": 1, "top_p": 1}'
    assert request_fields_to_send(None, {"tools": "drop"}) is None
    assert request_fields_to_send(logged, {}) == '{"temperature": 0.7, "tools": [{"type": "function"}], "seed": 1}'


def test_the_tokens_tool_definitions_add_are_counted_under_the_plan_tokenizer():
    import pyarrow as pa

    tools = [{"type": "function", "function": {"name": "card_status", "parameters": {"type": "object"}}}]
    with_tools = json.dumps({"tools": tools})
    fields = [with_tools, None, '{"temperature": 0}', with_tools]
    plan = pa.table({"request_fields": pa.array(fields, pa.string())})
    tokenizer = ApproxTokenizer()
    expected = tokenizer.count_text(json.dumps(tools, ensure_ascii=False))
    assert tool_definition_tokens(plan, tokenizer) == {"requests": 2, "tokens_mean": expected, "tokens_max": expected}
    assert expected > 0
