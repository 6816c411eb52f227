"""What the asset modules share: partitions, materialisation metadata, check results and table checks, run records."""
