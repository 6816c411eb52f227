-- json_line_problem(is_json, is_object, field_problem): why a JSON-lines record is quarantined,
-- the same words for every JSON-lines format. A scalar macro that ingest defines before a
-- format's *_fields query calls it: a line that does not parse, then one that is not an object,
-- then the format's own field checks (field_problem, NULL when the fields are fine). Each
-- format decides what an object is (Mooncake looks at the first character, to spare a parse).
-- (noqa CP05: sqlfluff parses a macro's untyped parameter names as data types.)
CREATE OR REPLACE TEMP MACRO json_line_problem(is_json, is_object, field_problem) AS  -- noqa: CP05
CASE
    WHEN NOT is_json THEN 'not valid JSON'
    WHEN NOT is_object THEN 'not a JSON object'
    ELSE field_problem
END
