"""Each figure made beside its claim, with its verdict: headline, arms, repeats, unjudged claims, figures.parquet."""
