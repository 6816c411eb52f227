"""What the asset modules share: partitions, materialisation metadata, check results, run records."""
