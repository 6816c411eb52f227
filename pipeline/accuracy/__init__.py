"""The accuracy stage: the buyer's labelled slice, sent and scored.

`labelled_slice` loads and renders the items and scores replies; `scorers` the scoring rules;
`client` sends the slice on its own after the load (mode separate); `replies` reads the replies of
items mixed into the load back from the raw timings (mode mixed).
"""
