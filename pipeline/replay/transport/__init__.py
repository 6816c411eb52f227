"""One request over the wire: the candidate's API (path, body, reader), over httpx or aiohttp."""
