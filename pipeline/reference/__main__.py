"""`python -m pipeline.reference --host 127.0.0.1 --port 8100 --profile demo [--timeline FILE]`"""

from __future__ import annotations

import argparse

from pipeline.reference.launch import serve


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.reference", description="Serve the loadproof reference endpoint."
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--profile", default="demo", help="bundled profile name or YAML path")
    parser.add_argument(
        "--timeline", default=None, help="append the server's per-request timeline (JSONL) to this file"
    )
    parser.add_argument("--oracle", default=None, help="accuracy oracle YAML (answer key + probabilities)")
    args = parser.parse_args(argv)
    try:
        serve(args.host, args.port, args.profile, args.timeline, args.oracle)
    except ValueError as exc:
        parser.error(str(exc))
    except KeyboardInterrupt:  # Ctrl-C after the clean stop: 128 + SIGINT, no traceback
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
