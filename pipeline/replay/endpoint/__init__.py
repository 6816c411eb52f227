"""What is behind an endpoint and what it says of itself: reachability, fingerprint, engine facts, /metrics."""
