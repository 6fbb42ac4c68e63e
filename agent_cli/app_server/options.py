"""`agent app-server`'s command line, with Codex's flag names (``--listen``, ``--ws-auth``,
``--ws-token-file``, ``--ws-token-sha256``), and the checks made before anything listens: a
WebSocket without a token is refused unless ``--ws-auth none`` says so, and never beyond loopback."""

from __future__ import annotations

import argparse
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from agent_cli.app_server.auth import AuthSetupError, TokenCheck
from agent_cli.app_server.page_options import add_page_options
from agent_cli.arguments import add_session_options
from agent_cli.paths import agent_home, warm_server_dir
from agent_cli.sandbox.hidden import secret_files

DEFAULT_IDLE_UNLOAD = 30 * 60  # seconds a thread without subscribers stays loaded (Codex's 30 minutes)
SOCKET_NAME = "app-server.sock"


class OptionsError(Exception):
    """The command line cannot run as given; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Listen:
    kind: str  # "stdio", "unix" or "ws"
    path: Path | None = None  # unix
    host: str = ""  # ws
    port: int = 0  # ws; 0 picks a free port
    default_path: bool = False  # unix:// without a path: ours to create, in a private folder

    @property
    def loopback(self) -> bool:
        return self.kind != "ws" or ipaddress.ip_address(self.host).is_loopback


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent app-server",
        description="Serve sessions over Codex's app-server protocol (JSON-RPC) to the Codex TUI "
        "(`codex --remote`), its IDE extension or any client of that protocol.",
    )
    add_session_options(parser)
    parser.add_argument(
        "--listen",
        default="stdio://",
        metavar="URL",
        help="stdio:// (default), unix:// (a private socket of yours), unix://PATH, or ws://IP:PORT",
    )
    parser.add_argument(
        "--ws-auth",
        choices=("capability-token", "none"),
        help="how a WebSocket client proves it is you: capability-token (with --ws-token-file or "
        "--ws-token-sha256), or none, said out loud (loopback only: any local user could drive your sessions)",
    )
    parser.add_argument("--ws-token-file", metavar="PATH", help="absolute path of a file holding the token (mode 0600)")
    parser.add_argument("--ws-token-sha256", metavar="HEX", help="the token's SHA-256, in hexadecimal")
    parser.add_argument(
        "--idle-unload",
        type=float,
        default=DEFAULT_IDLE_UNLOAD,
        metavar="SECONDS",
        help=f"how long a thread nobody watches stays loaded before it is saved and unloaded (default {DEFAULT_IDLE_UNLOAD})",
    )
    parser.add_argument(
        "--idle-exit",
        type=float,
        metavar="SECONDS",
        help="end once no thread has been loaded and no client connected for SECONDS (the per-user host "
        "that `agent --bg` starts: 300); by default the server runs until it is stopped",
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="run the repository's own MCP servers, hooks and plugins without the trust question "
        "(as `agent exec --trust`); otherwise they run only in folders trusted before",
    )
    add_page_options(parser)
    return parser


def parse_listen(url: str) -> Listen:
    if url in ("stdio://", "stdio", ""):
        return Listen("stdio")
    if url.startswith("unix://"):
        rest = url[len("unix://") :]
        if not rest:
            return Listen("unix", default_socket_path(), default_path=True)
        return Listen("unix", Path(rest).expanduser().absolute())
    if url.startswith("ws://"):
        parts = urlsplit(url)
        if parts.path not in ("", "/") or parts.query or parts.hostname is None:
            raise OptionsError(f"--listen {url}: expected ws://IP:PORT")
        try:
            ipaddress.ip_address(parts.hostname)
            port = parts.port
        except ValueError as exc:
            raise OptionsError(f"--listen {url}: {exc} (give an IP address, e.g. ws://127.0.0.1:4500)") from None
        if port is None:
            raise OptionsError(f"--listen {url}: the port is missing (ws://IP:PORT)")
        return Listen("ws", host=parts.hostname, port=port)
    raise OptionsError(f"--listen {url}: unknown transport (stdio://, unix://, unix://PATH or ws://IP:PORT)")


def default_socket_path() -> Path:
    """In the warm exec server's 0700 folder: under $XDG_RUNTIME_DIR, else under $AGENT_HOME (never
    /tmp, which sandboxed commands may write), which every sandbox masks (paths.py)."""
    return warm_server_dir() / SOCKET_NAME


def token_file_warning(args: argparse.Namespace) -> str | None:
    """A warning when the token file is one sandboxed commands can read: with the token and the
    network, a command would drive this server, whose turns run outside its sandbox."""
    if args.ws_token_file is None:
        return None
    path = Path(args.ws_token_file).expanduser()
    if str(path.resolve()) in secret_files():
        return None
    return (
        f"sandboxed commands can read {path}: keep the token in {agent_home()}/NAME.token, which every "
        "sandbox hides, or give its SHA-256 with --ws-token-sha256"
    )


def token_check(args: argparse.Namespace, listen: Listen) -> TokenCheck | None:
    """The WebSocket's token check, or None (no WebSocket, or ``--ws-auth none`` on loopback)."""
    given = args.ws_token_file is not None or args.ws_token_sha256 is not None
    if listen.kind != "ws":
        if args.ws_auth or given:
            raise OptionsError("--ws-auth, --ws-token-file and --ws-token-sha256 apply to --listen ws:// only")
        return None
    if args.ws_auth is None:
        raise OptionsError(
            "a WebSocket needs a token: --ws-auth capability-token --ws-token-file PATH (or --ws-token-sha256 HEX); "
            "--ws-auth none opens it to anyone who can reach the port"
        )
    if args.ws_auth == "none":
        if given:
            raise OptionsError("--ws-auth none takes no token; use --ws-auth capability-token")
        if not listen.loopback:
            raise OptionsError(f"refusing to listen on {listen.host} without a token: --ws-auth none is for loopback")
        return None
    if (args.ws_token_file is None) == (args.ws_token_sha256 is None):
        raise OptionsError(
            "--ws-auth capability-token needs exactly one of --ws-token-file PATH or --ws-token-sha256 HEX"
        )
    try:
        if args.ws_token_file is not None:
            return TokenCheck.from_file(Path(args.ws_token_file).expanduser())
        return TokenCheck.from_sha256(str(args.ws_token_sha256))
    except AuthSetupError as exc:
        raise OptionsError(str(exc)) from None
