"""Run the fake model server in the foreground.

    python -m tests.fake_server --port 8765 [--script FILE.json] [--context-window N]

FILE.json is a JSON list of reply objects (see `Reply.from_dict`), e.g.
    [{"text": "hi"}, {"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]},
     {"error": {"status": 429, "retry_after": 1}}, {"cut": {"after_events": 3}}]
Once the script runs dry (or without one) the demo responder in `responder.py`
answers. Point the agent at it with OPENAI_BASE_URL=http://127.0.0.1:PORT/v1
or ANTHROPIC_BASE_URL=http://127.0.0.1:PORT (any API key).
"""

from __future__ import annotations

import argparse
import json
import sys

from .responder import default_responder
from .script import Reply
from .server import FakeModelServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--script", help="JSON file: a list of reply objects")
    parser.add_argument("--context-window", type=int, default=None, help="emulate a small context window (tokens)")
    parser.add_argument("--delay", type=float, default=None, help="seconds between SSE events for every reply")
    parser.add_argument("--chat-reasoning-field", default="reasoning_content")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each request to stderr")
    args = parser.parse_args(argv)

    replies: list[Reply] = []
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, list):
            parser.error("--script must contain a JSON list")
        replies = [Reply.from_dict(d) for d in data]

    def fallback(request: object) -> Reply:
        reply = default_responder(request)
        if args.delay is not None:
            reply.delay = args.delay
        return reply

    if args.delay is not None:
        for r in replies:
            r.delay = args.delay
    server = FakeModelServer(
        args.context_window,
        host=args.host,
        port=args.port,
        fallback=fallback,
        chat_reasoning_field=args.chat_reasoning_field,
        verbose=args.verbose,
        max_recorded=100,
    )
    server.script(*replies)
    server.start()
    print(f"listening on {server.base_url}", flush=True)
    try:
        while server._thread is not None and server._thread.is_alive():
            server._thread.join(timeout=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
