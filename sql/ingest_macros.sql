-- ingest_macros: the DuckDB macros every format's *_fields query shares (ingest defines them on
-- the connection first), so that a format's query holds only its field map and what its records
-- mean; sql/ingest_log_fields.sql gives every format's fields the one shape ingest_canonical reads.
-- (noqa CP05: sqlfluff parses a macro's untyped parameter names as data types.)
--
-- json_line_problem(line, is_object, field_problem): why a JSON-lines record is quarantined, the
-- same words for every JSON-lines format: the format's own field checks (field_problem, NULL when
-- the fields are fine) for an object; else a line that does not parse, else one that is no object.
-- Each format decides what an object is (one parse that succeeded, a first character of '{'); only
-- a line that is none is parsed again (json_valid), to tell broken JSON from a non-object.
CREATE OR REPLACE TEMP MACRO json_line_problem(line, is_object, field_problem) AS  -- noqa: CP05
CASE
    WHEN is_object THEN field_problem
    WHEN NOT json_valid(line) THEN 'not valid JSON'
    ELSE 'not a JSON object'
END;

-- json_object_text(line, paths): one parse of a line that starts as an object, every path's value
-- as text (a value that is no string keeps its JSON text); NULL when the line is not an object
-- or does not parse.
CREATE OR REPLACE TEMP MACRO json_object_text(line, paths) AS  -- noqa: CP05
CASE WHEN regexp_matches(line, '^ *\{') THEN try(json_extract_string(line, paths)) END;

-- json_object_values(line, paths): the same as JSON values (their types kept), for formats that
-- check a value's JSON type.
CREATE OR REPLACE TEMP MACRO json_object_values(line, paths) AS  -- noqa: CP05
CASE WHEN json_valid(line) AND regexp_matches(line, '^ *\{') THEN json_extract(line, paths) END;

-- json_count_text(value): a JSON count as text: an integer as written, any other value as its
-- JSON text (ingest_canonical then rejects it as no integer ≥ 1, quoting it).
CREATE OR REPLACE TEMP MACRO json_count_text(value) AS  -- noqa: CP05
CASE WHEN json_type(value) IN ('BIGINT', 'UBIGINT') THEN value ->> '$' ELSE CAST(value AS VARCHAR) END;

-- message_prefix_hashes(messages): a chat's prefix blocks are its message boundaries: block k
-- hashes the first k messages (NULL for no messages).
CREATE OR REPLACE TEMP MACRO message_prefix_hashes(messages) AS  -- noqa: CP05
CASE WHEN len(messages) > 0 THEN list_transform(range(1, len(messages) + 1), lambda k: hash(messages[1:k])) END;

-- log_time(kind, time_text, origin, unit_us, zone): a logged time as TIMESTAMPTZ: a number of
-- units (unit_us microseconds each) after origin, a timestamp with its own offset, or a
-- timestamp without one read in zone; NULL when it does not read as its kind.
CREATE OR REPLACE TEMP MACRO log_time(kind, time_text, origin, unit_us, zone) AS  -- noqa: CP05
CASE
    WHEN time_text IS NULL THEN NULL
    WHEN kind = 'number' THEN
        CAST(origin AS TIMESTAMPTZ) + to_microseconds(CAST(round(try_cast(time_text AS DOUBLE) * unit_us) AS BIGINT))
    WHEN regexp_matches(time_text, '([Zz]|[+-]\d\d(:?\d\d)?)$') THEN try_cast(time_text AS TIMESTAMPTZ)
    ELSE timezone(zone, try_cast(time_text AS TIMESTAMP))
END;

-- field_reason(words, field_name, value, separator, echo_values): a field's reject reason, words
-- a format() pattern naming the field; the bad value's first 40 characters follow the separator
-- only with echo_values (privacy.text keep).
CREATE OR REPLACE TEMP MACRO field_reason(words, field_name, value, separator, echo_values) AS  -- noqa: CP05
concat(format(words, field_name), CASE WHEN echo_values THEN separator || left(value, 40) END);

-- block_ids(value): a trace's hash_ids as a list, NULL when the value is no list of non-negative
-- integers; block_ids_problem(value, ids) names that problem (a missing hash_ids is no problem).
CREATE OR REPLACE TEMP MACRO block_ids(value) AS  -- noqa: CP05
CASE WHEN json_type(value) = 'ARRAY' THEN try_cast(value AS UBIGINT[]) END;

CREATE OR REPLACE TEMP MACRO block_ids_problem(value, ids) AS  -- noqa: CP05
CASE
    WHEN json_type(value) IS NOT NULL AND (ids IS NULL OR list_count(ids) <> len(ids))
        THEN 'field hash_ids: not a list of non-negative integers'
END;

-- json_is_number(value): whether a JSON value is a number.
CREATE OR REPLACE TEMP MACRO json_is_number(value) AS  -- noqa: CP05
json_type(value) IN ('BIGINT', 'UBIGINT', 'DOUBLE');

-- request_fields_from(field_values): the logged request fields that change what the server does, as one
-- JSON object under OpenAI chat-completions names (NULL when the log carries none). field_values
-- must be a column (a format computes the list in a CTE first): the macro names it forty times,
-- and an expression in its place would be evaluated as often. The values are
-- JSON values in this order, NULL where the log has no such field (the order of
-- pipeline/workload/logs/request_fields.py REQUEST_FIELDS, which a test holds to this list):
-- tools, tool_choice, parallel_tool_calls, functions, function_call, response_format, temperature,
-- top_p, seed, stop, n, presence_penalty, frequency_penalty, logprobs, top_logprobs,
-- max_tokens, max_completion_tokens, reasoning_effort, chat_template_kwargs, thinking
-- (max_tokens and max_completion_tokens: the client's caps, kept as logged and never sent)
CREATE OR REPLACE TEMP MACRO request_fields_from(field_values) AS  -- noqa: CP05
-- written as text (concat_ws skips the absent fields and JSON nulls): 2.7× faster than a MAP through
-- to_json
nullif('{' || concat_ws(
    ',',
    '"tools":' || nullif(field_values[1], 'null'),
    '"tool_choice":' || nullif(field_values[2], 'null'),
    '"parallel_tool_calls":' || nullif(field_values[3], 'null'),
    '"functions":' || nullif(field_values[4], 'null'),
    '"function_call":' || nullif(field_values[5], 'null'),
    '"response_format":' || nullif(field_values[6], 'null'),
    '"temperature":' || nullif(field_values[7], 'null'),
    '"top_p":' || nullif(field_values[8], 'null'),
    '"seed":' || nullif(field_values[9], 'null'),
    '"stop":' || nullif(field_values[10], 'null'),
    '"n":' || nullif(field_values[11], 'null'),
    '"presence_penalty":' || nullif(field_values[12], 'null'),
    '"frequency_penalty":' || nullif(field_values[13], 'null'),
    '"logprobs":' || nullif(field_values[14], 'null'),
    '"top_logprobs":' || nullif(field_values[15], 'null'),
    '"max_tokens":' || nullif(field_values[16], 'null'),
    '"max_completion_tokens":' || nullif(field_values[17], 'null'),
    '"reasoning_effort":' || nullif(field_values[18], 'null'),
    '"chat_template_kwargs":' || nullif(field_values[19], 'null'),
    '"thinking":' || nullif(field_values[20], 'null')
) || '}', '{}');

-- request_values_of(body): the values request_fields_from reads, from an OpenAI-shaped request
-- body (JSON; a column: the macro names it twice); NULL when the body is no object.
CREATE OR REPLACE TEMP MACRO request_values_of(body) AS  -- noqa: CP05
CASE WHEN json_type(body) = 'OBJECT' THEN json_extract(body, [
    '$.tools', '$.tool_choice', '$.parallel_tool_calls', '$.functions', '$.function_call', '$.response_format',
    '$.temperature', '$.top_p', '$.seed', '$.stop', '$.n', '$.presence_penalty', '$.frequency_penalty',
    '$.logprobs', '$.top_logprobs', '$.max_tokens', '$.max_completion_tokens', '$.reasoning_effort',
    '$.chat_template_kwargs', '$.thinking'
]) END;

-- structured_request(request_fields): whether the request asked for JSON (response_format
-- json_object or json_schema) or offered tools or functions; NULL when the log carries no fields.
CREATE OR REPLACE TEMP MACRO structured_request(request_fields) AS  -- noqa: CP05
CASE WHEN request_fields IS NOT NULL THEN
    coalesce(request_fields ->> '$.response_format.type' IN ('json_object', 'json_schema'), FALSE)
    OR coalesce(json_array_length(request_fields, '$.tools') > 0, FALSE)
    OR coalesce(json_array_length(request_fields, '$.functions') > 0, FALSE)
END;

-- otel_number(value): an OTLP attribute's number (intValue, a string in OTLP JSON, or doubleValue)
-- as a JSON number.
CREATE OR REPLACE TEMP MACRO otel_number(value) AS  -- noqa: CP05
CASE
    WHEN value['intValue'] IS NOT NULL THEN to_json(try_cast(value['intValue'] AS BIGINT))
    WHEN value['doubleValue'] IS NOT NULL THEN to_json(value['doubleValue'])
END
