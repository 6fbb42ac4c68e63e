"""The tool interface: a spec the model sees and an async ``run``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.events import Event, FileChange
from agent_cli.files.limits import ReadLimits
from agent_cli.items import Image
from agent_cli.models.base import ToolSpec

if TYPE_CHECKING:
    from agent_cli.network.gate import NetworkGate
    from agent_cli.sandbox.policy import SandboxPolicy
    from agent_cli.tools.editor_files import EditorFiles
    from agent_cli.tools.process import ProcessResult
    from agent_cli.tools.shell_snapshot import ShellSnapshot


class ToolError(Exception):
    """A failure the model should read and can fix (bad path, hunk mismatch, bad regex...)."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may use for one call, built once for it (session/services.py) and never changed:
    the sandbox and environment the approval step chose are in it from the start. Tools keep no
    state of their own."""

    cwd: Path
    data_dir: Path  # the agent's data folder; spilled outputs go to data_dir / "tool-outputs"
    emit: Callable[[Event], None] = lambda event: None
    call_id: str = ""
    output_token_limit: int = 10_000  # budget for one output in the model's context
    shell_timeout_ms: int = 120_000
    env: dict[str, str] | None = None  # environment for commands; None = inherit
    writable_roots: tuple[Path, ...] = ()  # where apply_patch may write; empty = anywhere
    sandbox: SandboxPolicy | None = None  # confines shell commands and apply_patch; None = unconfined
    shell_snapshot: ShellSnapshot | None = None  # the login shell's environment; None = `bash -lc`
    memory: Any = None  # the session's MemoryBook for the memory tools; None when memory is off
    read_limits: ReadLimits = field(default_factory=ReadLimits)  # thresholds of read_file's processors
    read_denied: Callable[[Path], Any] | None = None  # a Read deny rule hides the path (grep, list_dir skip it)
    background: Any = None  # the session's BackgroundProcesses (tools/background.py); None: none allowed
    web: Any = None  # the session's WebSettings for web_fetch (tools/web_fetch.py)
    network: NetworkGate | None = None  # the session's domain lists and answers (network/gate.py)
    editor: EditorFiles | None = None  # the client editor's buffers (ACP); None: the disk
    command_runner: Callable[..., Awaitable[ProcessResult]] | None = None  # run_process's stand-in (ACP terminals)

    def resolve(self, path: str) -> Path:
        """Resolve a model-supplied path against the session's cwd."""
        return (self.cwd / Path(path).expanduser()).resolve()


@dataclass
class ToolResult:
    output: str  # what the model reads, already truncated to the budget
    success: bool = True
    exit_code: int | None = None
    changes: tuple[FileChange, ...] = ()
    images: tuple[Image, ...] = ()  # shown to the model after the text (tools/image_result.py)


class Tool(ABC):
    """A tool. ``read_only`` tools may run concurrently and are allowed in ask/plan modes."""

    spec: ToolSpec
    read_only: bool = False
    listed: bool = True  # False: behind the door (tools/door.py), not in the tool list (MCP search mode)
    server_address: tuple[str, str] | None = None  # (server, the server's name for it): an MCP server's tool

    @property
    def name(self) -> str:
        return self.spec.name

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
