"""The buyer's labelled slice: loading, scoring, and the two ways of sending it (separate, or mixed into the load)."""
