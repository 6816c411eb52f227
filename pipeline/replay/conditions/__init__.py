"""Replays at other conditions than the production load: the sweep's levels, the capacity search, the arms."""
