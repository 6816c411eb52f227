"""Raw timings into the analysis tables by the sql/ queries: latency, throughput, errors, cost, accuracy."""
