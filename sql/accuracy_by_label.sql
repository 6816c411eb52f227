-- accuracy_by_label: per candidate and true label, how the items were answered: one row per
-- (label, predicted) pair, the confusion matrix in long form, with the label's own accuracy.
-- `correct` is the scorer's judgement (a normalised answer may be spelt unlike its label).
-- view: accuracy_results
WITH pairs AS (
    SELECT candidate, label, predicted, correct, count(*) AS items
    FROM accuracy_results
    GROUP BY candidate, label, predicted, correct
),
per_label AS (
    SELECT
        candidate,
        label,
        CAST(sum(items) AS BIGINT) AS label_items,
        CAST(coalesce(sum(items) FILTER (WHERE correct), 0) AS BIGINT) AS label_correct
    FROM pairs
    GROUP BY candidate, label
)
SELECT
    pairs.candidate,
    pairs.label,
    pairs.predicted,
    pairs.correct,
    pairs.items,
    per_label.label_items,
    per_label.label_correct,
    per_label.label_correct / per_label.label_items AS label_accuracy
FROM pairs
JOIN per_label USING (candidate, label)
ORDER BY pairs.candidate ASC, pairs.label ASC, pairs.items DESC, pairs.predicted ASC
