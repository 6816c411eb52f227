-- ingest_otel_genai_fields: OpenTelemetry GenAI spans as the Collector's file exporter writes
-- them: OTLP JSON, one ExportTraceServiceRequest per line,
--   {"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans": [{"scope": {...},
--     "spans": [{"traceId": "...", "spanId": "...", "name": "chat gpt-4o",
--                "startTimeUnixNano": "1762092000500000000", "endTimeUnixNano": "...",
--                "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
--                               {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}}, ...],
--                "events": [{"name": "gen_ai.user.message", "attributes": [...]}, ...]}]}]}]}
-- A line holds many spans; only those whose gen_ai.operation.name is chat or text_completion are
-- requests (the rest of the trace is neither a row nor a reject). A request's record is
-- "span <k> (spanId <id>)", k its place among the line's spans, so a reject names the span.
-- Times are nanoseconds since the epoch (a string, as OTLP JSON writes 64-bit integers); they
-- become microseconds here (exact in a double). The spanId is the request id; the model
-- (gen_ai.request.model) the route, the resource's service.name the tenant;
-- gen_ai.conversation.id, else session.id, the session. Messages, when captured, come from the
-- gen_ai.input.messages attribute ([{role, parts: [{type: text, content}]}]) or from the span's
-- gen_ai.{system,user,assistant,tool}.message events (attribute content, or gen_ai.event.content
-- holding {"content": ...}); a gen_ai.input.messages that is not valid JSON rejects its span.
-- The request fields are the gen_ai.request.* attributes under OpenAI names: temperature, top_p,
-- seed, stop_sequences (stop), frequency_penalty, presence_penalty, choice.count (n) and
-- max_tokens (the client's cap, kept as logged and never sent; the replay asks for the
-- tokens produced, gen_ai.usage.output_tokens).
-- views: data_lines (sql/ingest_data_lines.sql); macros: sql/ingest_macros.sql
WITH parsed AS (
    -- one parse per line (from_json reads a value of another type as NULL); only a line that fails
    -- it is parsed again, to tell broken JSON from a value that is no object
    SELECT
        *,
        CASE WHEN regexp_matches(line, '^ *\{') THEN try(from_json(line, '{
            "resourceSpans": [{
                "resource": {"attributes": [{"key": "VARCHAR", "value": {"stringValue": "VARCHAR"}}]},
                "scopeSpans": [{"spans": [{
                    "spanId": "VARCHAR", "startTimeUnixNano": "VARCHAR", "endTimeUnixNano": "VARCHAR",
                    "attributes": [{"key": "VARCHAR", "value": {
                        "stringValue": "VARCHAR", "intValue": "VARCHAR", "doubleValue": "DOUBLE", "arrayValue": "JSON"
                    }}],
                    "events": [{"name": "VARCHAR", "attributes": [{"key": "VARCHAR", "value": {"stringValue": "VARCHAR"}}]}]
                }]}]
            }]
        }')) END AS request
    FROM data_lines
),
lines AS (
    SELECT
        file_id,
        source_line,
        line,
        json_line_problem(
            line,
            request IS NOT NULL,
            CASE WHEN request['resourceSpans'] IS NULL THEN 'field resourceSpans: missing or not a list' END
        ) AS problem,
        request['resourceSpans'] AS resource_spans
    FROM parsed
),
-- one row per span of a good line and one (no span) per rejected line, in one stream: a
-- materialised CTE read twice (spans, rejected lines) cost a quarter of the query. Unnested a
-- resource at a time: a list of {span, service} built per line cost as much again as the parse.
resources AS (
    -- a rejected line shows all of it; a good line's text is left out of its spans' rows (even its
    -- first 300 characters were 3 GB at 10 M spans, spilled twice): sql/ingest_reject_lines.sql
    -- gives a span that ingest_canonical rejects the start of its line
    SELECT
        file_id,
        source_line,
        problem AS line_problem,
        CASE WHEN problem IS NOT NULL THEN line END AS raw,
        -- the spans of the resources before this one: span k of a line counts over all its resources
        list_transform(
            resource_spans,
            lambda resource: list_sum(list_transform(resource['scopeSpans'], lambda scope: len(scope.spans)))
        ) AS spans_per_resource,
        unnest(CASE WHEN problem IS NULL THEN resource_spans ELSE [NULL] END) AS resource,
        unnest(range(1, CASE WHEN problem IS NULL THEN len(resource_spans) ELSE 1 END + 1)) AS resource_index
    FROM lines
),
resource_spans AS (
    SELECT
        file_id,
        source_line,
        line_problem,
        raw,
        coalesce(list_sum(spans_per_resource[1:resource_index - 1]), 0) AS spans_before,
        list_filter(resource.resource.attributes, lambda a: a.key = 'service.name')[1].value['stringValue'] AS service,
        flatten(list_transform(resource['scopeSpans'], lambda scope: scope.spans)) AS spans
    FROM resources
),
numbered AS (
    SELECT
        file_id,
        source_line,
        line_problem,
        raw,
        service,
        unnest(CASE WHEN line_problem IS NULL THEN spans ELSE [NULL] END) AS span,
        spans_before + unnest(range(1, CASE WHEN line_problem IS NULL THEN len(spans) ELSE 1 END + 1)) AS span_index
    FROM resource_spans
),
attributes AS (
    SELECT
        file_id,
        source_line,
        line_problem,
        raw,
        span_index,
        service,
        span['spanId'] AS span_id,
        span['startTimeUnixNano'] AS start_ns,
        span['endTimeUnixNano'] AS end_ns,
        span.events AS events,
        span.attributes AS span_attributes,
        list_transform(span.attributes, lambda a: a.key) AS span_keys
    FROM numbered
),
attribute_values AS (
    -- each wanted attribute's value by its key's first position (list_position: no lambda per key),
    -- of the requests only (the operation's own lookup: a filter on a[1] would be pushed below
    -- this projection and search every attribute twice; materialising instead cost more)
    SELECT
        * EXCLUDE (span_attributes, span_keys),
        list_transform(
            ['gen_ai.operation.name', 'gen_ai.request.model', 'gen_ai.usage.input_tokens',
             'gen_ai.usage.output_tokens', 'gen_ai.conversation.id', 'session.id', 'gen_ai.input.messages',
             'gen_ai.request.temperature', 'gen_ai.request.top_p', 'gen_ai.request.seed',
             'gen_ai.request.stop_sequences', 'gen_ai.request.frequency_penalty', 'gen_ai.request.presence_penalty',
             'gen_ai.request.max_tokens', 'gen_ai.request.choice.count'],
            lambda name: span_attributes[list_position(span_keys, name)].value
        ) AS a
    FROM attributes
    WHERE line_problem IS NOT NULL
       OR span_attributes[list_position(span_keys, 'gen_ai.operation.name')].value['stringValue']
       IN ('chat', 'text_completion')
),
requests AS (
    SELECT
        *,
        coalesce(
            CASE WHEN json_valid(a[7]['stringValue']) THEN list_transform(
                CAST(json_extract(a[7]['stringValue'], '$[*]') AS JSON[]),
                lambda m: {
                    'role': m ->> '$.role',
                    'content': array_to_string(json_extract_string(m, '$.parts[*].content'), '')
                }
            ) END,
            list_transform(
                list_filter(
                    events,
                    lambda e: regexp_matches(e.name, '^gen_ai\.(system|user|assistant|tool)\.message$')
                ),
                lambda e: {
                    'role': split_part(e.name, '.', 2),
                    'content': coalesce(
                        list_filter(e.attributes, lambda x: x.key = 'content')[1].value['stringValue'],
                        list_filter(
                            e.attributes, lambda x: x.key = 'gen_ai.event.content'
                        )[1].value['stringValue'] ->> '$.content'
                    )
                }
            )
        ) AS messages,
        -- the request fields, in request_fields_from's order
        [
            NULL, NULL, NULL, NULL, NULL, NULL,  -- tools, tool_choice, ..., response_format: not attributes
            otel_number(a[8]), otel_number(a[9]), otel_number(a[10]),  -- temperature, top_p, seed
            to_json(json_extract_string(a[11]['arrayValue'], '$.values[*].stringValue')),  -- stop
            otel_number(a[15]), otel_number(a[13]), otel_number(a[12]),  -- n, presence and frequency penalty
            NULL, NULL, otel_number(a[14]),  -- logprobs, top_logprobs, max_tokens
            NULL, NULL, NULL, NULL  -- max_completion_tokens, reasoning_effort, chat_template_kwargs, thinking
        ] AS request_values
    FROM attribute_values
),
span_fields AS (
    SELECT
        file_id,
        source_line,
        CASE
            WHEN line_problem IS NULL THEN format('span {} (spanId {})', span_index, coalesce(span_id, '?'))
        END AS record,
        raw,
        coalesce(
            line_problem,
            CASE WHEN NOT json_valid(a[7]['stringValue']) THEN 'field gen_ai.input.messages: not valid JSON' END
        ) AS problem,
        span_id AS request_id,
        coalesce(
            CAST(try_cast(start_ns AS HUGEINT) // 1000 AS VARCHAR),
            start_ns
        ) AS arrival_raw,
        'number' AS arrival_kind,
        coalesce(
            CAST(try_cast(end_ns AS HUGEINT) // 1000 AS VARCHAR),
            end_ns
        ) AS completed_raw,
        coalesce(a[3]['intValue'], CAST(a[3]['doubleValue'] AS VARCHAR), a[3]['stringValue']) AS prompt_raw,
        coalesce(a[4]['intValue'], CAST(a[4]['doubleValue'] AS VARCHAR), a[4]['stringValue']) AS output_raw,
        service AS tenant,
        a[2]['stringValue'] AS route,
        CASE WHEN len(messages) > 0 THEN CAST(to_json(messages) AS VARCHAR) END AS messages_json,
        request_fields_from(request_values) AS request_fields,
        message_prefix_hashes(messages) AS prefix_hashes,
        nullif(coalesce(a[5]['stringValue'], a[6]['stringValue'], a[5]['intValue'], a[6]['intValue']), '') AS session_id
    FROM requests
)
SELECT * FROM span_fields
