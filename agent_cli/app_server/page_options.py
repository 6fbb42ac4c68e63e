"""The web page's options of `agent app-server` (page.py serves it), kept apart from page.py so
that parsing a command line never loads the WebSocket library."""

from __future__ import annotations

import argparse


def add_page_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-web",
        action="store_true",
        help="do not serve the web page on the ws:// port (browsers are then refused, as by Codex)",
    )
    parser.add_argument(
        "--web-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="another name the page is opened under (a LAN or Tailscale name, or localhost:PORT "
        "for a tunnel to another port); repeatable",
    )
