"""How much load a candidate carries: the sweep's levels, capacity at the SLA, replicas, users at a tier."""
