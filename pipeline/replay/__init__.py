"""The replay engine: send a replay plan to an OpenAI-compatible endpoint, record every timing.

Its rooms, one sub-package each:

- `production/`: the production replay scaled out and repeated: shards with one common start, repeats, their runs
  merged.
- `conditions/`: replays at other conditions than the production load: the sweep's levels, the capacity search, the
  arms.
- `client_validity/`: the client's own floor and ceiling: calibration against a zero-delay echo, the roofline.
- `endpoint/`: what is behind an endpoint and what it says of itself: reachability, fingerprint, engine facts,
  /metrics.
- `pacing/`: the plan sent on time: open and closed loops, session turns, sub-ms deadlines, loop lag, the run
  builder.
- `transport/`: one request over the wire: the candidate's API (path, body, reader), over httpx or aiohttp.
- `reading/`: a streamed reply read into its record, whatever the API: SSE, Responses events, error types, validity.
- `recording/`: one raw-timing record per request, and the crash-safe journal it lands in.
"""
