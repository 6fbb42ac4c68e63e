"""The sandbox: which paths commands and patches may write, and how a command is confined.

Modes: ``read-only`` (nothing writable), ``workspace-write`` (the cwd, configured writable roots
and temp dirs; ``.git``, ``.agent``, ``.claude`` and ``.mcp.json`` inside them stay read-only,
existing or not (protected.py), and so do git hooks and config, every nested ``.git`` and
dotfiles (guard.py); no network unless enabled) and ``danger-full-access`` (no sandbox).

On Linux a command is confined by bubblewrap when it works here (a user namespace without
capabilities, a read-only bind of ``/``, writable binds for the roots, a private network
namespace), otherwise by Landlock through the ``launcher.py`` launcher (plus a mount
namespace, no capabilities and a seccomp socket filter). Both cover the agent's own servers and
secrets wherever they lie (hidden.py: the warm exec server's folder, stored keys and tokens). Which one is probed once, lazily;
``AGENT_SANDBOX_MECHANISM=bubblewrap|landlock|none`` forces a choice. Every command runs through
the launcher or bubblewrap, sandboxed or not, so none outlives its end or the agent.
``apply_patch`` checks every resolved target with :meth:`SandboxPolicy.write_denial`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.sandbox import landlock
from agent_cli.sandbox.guard import guarded_part
from agent_cli.sandbox.hidden import masked_dirs, secret_files
from agent_cli.sandbox.host_sockets import host_sockets
from agent_cli.sandbox.network import ProxyRoute
from agent_cli.sandbox.protected import PROTECTED_NAMES, protected_part, read_only_paths

READ_ONLY, WORKSPACE_WRITE, FULL_ACCESS = "read-only", "workspace-write", "danger-full-access"
LAUNCHER = Path(__file__).with_name("launcher.py")
MECHANISM_ENV = "AGENT_SANDBOX_MECHANISM"
# Device files any command may write (``> /dev/null``); Landlock needs them listed.
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx")
DEVICE_DIRS = ("/dev/pts", "/dev/shm")
PROBE_TIMEOUT_S = 5
# Added to the shell tool's schema: how the model asks to run a command outside the sandbox.
ESCALATION_PARAMETERS = {
    "sandbox_permissions": {
        "type": "string",
        "enum": ["use_default", "require_escalated"],
        "description": "require_escalated: run outside the sandbox (the user is asked; give a justification).",
    },
    "justification": {"type": "string", "description": "With require_escalated: why, in one sentence, for the user."},
}


def is_within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def temp_dirs() -> list[Path]:
    """The temp folders commands may write under workspace-write."""
    dirs = [Path("/tmp")]
    if tmpdir := os.environ.get("TMPDIR"):
        dirs.append(Path(tmpdir))
    return [d.resolve() for d in dirs if d.is_dir()]


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    mode: str
    writable_roots: tuple[Path, ...] = ()  # resolved; empty under read-only
    network_access: bool = False
    workspace_roots: tuple[Path, ...] = ()  # the writable roots but the temp dirs
    # Files the agent runs outside the sandbox (a hook's or status line's script in the repository):
    # read-only like .claude/, so a command cannot rewrite what runs next unconfined.
    read_only_files: tuple[Path, ...] = ()
    network_proxy: ProxyRoute | None = None  # allow-list network: the way to the agent's proxy (network.py)

    @classmethod
    def create(
        cls,
        mode: str,
        cwd: Path,
        writable_roots: Iterable[Path] = (),
        network_access: bool = False,
        *,
        include_temp: bool = True,
    ) -> SandboxPolicy:
        if mode not in (READ_ONLY, WORKSPACE_WRITE, FULL_ACCESS):
            raise ValueError(f"unknown sandbox mode {mode!r}")
        roots: list[Path] = []
        workspace: list[Path] = []
        if mode == WORKSPACE_WRITE:
            workspace = list(dict.fromkeys(Path(c).expanduser().resolve() for c in [cwd, *writable_roots]))
            candidates = [*workspace, *(temp_dirs() if include_temp else [])]
            roots = list(dict.fromkeys(Path(c).expanduser().resolve() for c in candidates))
        return cls(mode, tuple(roots), network_access or mode == FULL_ACCESS, tuple(workspace))

    @property
    def proxied(self) -> bool:
        """Commands reach the network only through the agent's proxy (allow-list mode)."""
        return self.network_proxy is not None and not self.network_access

    @property
    def confines(self) -> bool:
        """True when commands must run confined (anything but danger-full-access)."""
        return self.mode != FULL_ACCESS

    def protected_paths(self) -> list[Path]:
        return [root / name for root in self.writable_roots for name in PROTECTED_NAMES]

    def protected(self, path: Path) -> Path | None:
        """The protected path (``.git``, ``.agent``, ``.claude``, ``.mcp.json`` at any depth of a
        writable root; a hooks folder, git config, a dotfile: sandbox_guard.py) that ``path`` is or lies in."""
        if self.mode != WORKSPACE_WRITE:
            return None
        for file in self.read_only_files:
            if path == file or path == Path(os.path.realpath(file)):
                return file
        return protected_part(path, self.writable_roots) or guarded_part(
            path, self.workspace_roots, self.writable_roots
        )

    def write_denial(self, path: Path) -> str | None:
        """Why writing ``path`` (already resolved) is not allowed; None when it is."""
        if self.mode == FULL_ACCESS:
            return None
        if self.mode == READ_ONLY:
            return f"{path} is not writable: the sandbox is read-only"
        if (protected := self.protected(path)) is not None:
            where = "" if path == protected else f" (inside {protected})"
            return f"{path}{where} is protected: it stays read-only in the sandbox (what is there runs later: config, hooks and their scripts, MCP servers, git)"
        if any(is_within(path, root) for root in self.writable_roots):
            return None
        roots = ", ".join(str(root) for root in self.writable_roots)
        return f"{path} is outside the sandbox's writable roots ({roots})"


# --- which mechanism enforces it -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mechanism:
    name: str  # "bubblewrap" | "landlock" | "none"
    detail: str  # for /status: "bubblewrap", "landlock (ABI 7)", "none (...)"


def _bwrap_works(bwrap: str) -> bool:
    return _bwrap_runs([bwrap, *_bwrap_base(network=False), "--", "true"])


def _bwrap_runs(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def bwrap_reports_status(bwrap: str) -> bool:
    """Whether this bubblewrap writes ``--json-status-fd`` (0.4 and later), by which the launcher
    tells a sandbox that could not be built from a command that failed (bwrap_retry.py)."""
    try:
        done = subprocess.run(
            [bwrap, "--json-status-fd", "1", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and b'"exit-code"' in done.stdout


@functools.cache
def _bwrap_user_namespace() -> list[str]:
    """``--unshare-user`` where bubblewrap can make a user namespace (a setuid bubblewrap on a
    kernel without unprivileged ones cannot); ``--cap-drop ALL`` holds either way."""
    bwrap = shutil.which("bwrap") or "bwrap"
    return ["--unshare-user"] if _bwrap_runs([bwrap, "--unshare-user", "--ro-bind", "/", "/", "true"]) else []


def _landlock_abi() -> int:
    return landlock.abi_version()


MECHANISMS = ("bubblewrap", "landlock")  # best first


@functools.cache
def mechanism_works(name: str) -> bool:
    """Whether ``name`` can confine a command on this machine (probed once, and only when asked:
    with bubblewrap working, Landlock's ctypes probe never runs at start-up)."""
    if not sys.platform.startswith("linux"):
        return False
    if name == "bubblewrap":
        bwrap = shutil.which("bwrap")
        return bool(bwrap) and _bwrap_works(bwrap)
    return _landlock_abi() >= 1


def working_mechanisms() -> tuple[str, ...]:
    """Every mechanism that works on this machine, best first."""
    return tuple(name for name in MECHANISMS if mechanism_works(name))


@functools.cache
def detect_mechanism() -> Mechanism:
    """The mechanism in use: bubblewrap if it can build a sandbox here, else Landlock, else none.

    ``AGENT_SANDBOX_MECHANISM`` may force one (or ``none``); other values mean ``auto``.
    """
    forced = os.environ.get(MECHANISM_ENV, "").strip().lower()
    if forced == "none":
        return Mechanism("none", f"none ({MECHANISM_ENV}=none)")
    choices = [forced] if forced in MECHANISMS else MECHANISMS
    chosen = next((name for name in choices if mechanism_works(name)), None)
    if chosen == "landlock":
        return Mechanism("landlock", f"landlock (ABI {_landlock_abi()})")
    if chosen == "bubblewrap":
        return Mechanism("bubblewrap", "bubblewrap")
    if forced in MECHANISMS:
        return Mechanism("none", f"none ({MECHANISM_ENV}={forced} does not work here)")
    if not sys.platform.startswith("linux"):
        return Mechanism("none", f"none (no sandbox support on {sys.platform})")
    return Mechanism("none", "none (neither a working bubblewrap nor Landlock was found)")


def sandbox_mechanism() -> str:
    """What enforces the sandbox on this machine, for /status and the README's safety model."""
    return detect_mechanism().detail


def start_warning(mode: str, interactive: bool) -> str | None:
    """The one warning at session start when the sandbox cannot be enforced."""
    if mode == FULL_ACCESS or detect_mechanism().name != "none":
        return None
    consequence = (
        "you will be asked before each command that is not a known read-only one"
        if interactive
        else "commands run without confinement"
    )
    return f"sandbox_mode {mode} cannot be enforced here ({sandbox_mechanism()}): {consequence}"


# --- confining a command --------------------------------------------------------------------


def _bwrap_base(network: bool, outlive_agent: bool = False) -> list[str]:
    # A user namespace with no capabilities: root inside cannot unmount or remount the binds.
    dies = [] if outlive_agent else ["--die-with-parent"]
    args = [
        *_bwrap_user_namespace(),
        "--cap-drop",
        "ALL",
        *dies,
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    return args if network else ["--unshare-net", *args]


def _read_only_paths(policy: SandboxPolicy) -> list[str]:
    if not policy.writable_roots:
        return []
    return read_only_paths(policy.workspace_roots, policy.writable_roots, policy.read_only_files)


def _hidden(policy: SandboxPolicy, masked: list[str]) -> list[str]:
    """What to cover with /dev/null: the agent's own secret files (hidden.py), and every host
    socket bound when the command starts (but the proxy's own, and those in masked folders) save
    the project's own: one in the workspace (an earlier command's server), unless it lies in a
    protected place (``.git``, ``~/.gnupg`` when the workspace is your home). One in ``/tmp`` is
    any program's: the user's tmux server there ran whatever a sandboxed command asked it to."""
    own = policy.network_proxy.socket if policy.proxied else None  # type: ignore[union-attr]
    temp = temp_dirs()
    projects = [root for root in policy.workspace_roots if not any(is_within(t, root) for t in temp)]
    sockets: list[str] = []
    for path in host_sockets(map(Path, masked)):
        where = Path(path)
        if path == own or (any(is_within(where, root) for root in projects) and policy.protected(where) is None):
            continue
        sockets.append(path)
    return [*sockets, *secret_files()]


def bwrap_argv(
    argv: Sequence[str], policy: SandboxPolicy, bwrap: str = "bwrap", outlive_agent: bool = False
) -> list[str]:
    """bubblewrap: everything read-only, then the writable roots, then the protected paths, host
    sockets and the agent's secrets covered and its folders masked (last: over whatever came before).
    Proxied, it keeps the network namespace the launcher made."""
    args = [bwrap, *_bwrap_base(policy.network_access or policy.proxied, outlive_agent)]
    for root in policy.writable_roots:
        if root.exists():
            args += ["--bind", str(root), str(root)]
    for path in _read_only_paths(policy):
        args += ["--ro-bind", path, path]
    masked = masked_dirs()
    for path in _hidden(policy, masked):
        args += ["--ro-bind", "/dev/null", path]
    for path in masked:
        args += ["--tmpfs", path, "--remount-ro", path]
    return [*args, "--", *argv]


def _launcher_prefix() -> list[str]:
    return [sys.executable, "-I", "-S", str(LAUNCHER)]


def _launcher(argv: Sequence[str], spec: dict) -> list[str]:
    return [*_launcher_prefix(), json.dumps(spec), "--", *argv]


def landlock_argv(argv: Sequence[str], policy: SandboxPolicy, outlive_agent: bool = False) -> list[str]:
    """The launcher applies Landlock (+ a mount namespace where it can have one, no capabilities,
    seccomp without network) and then runs ``argv``."""
    spec = {
        "writable": [str(root) for root in policy.writable_roots] + list(DEVICE_DIRS),
        "files": list(DEVICE_FILES),
        "network": policy.network_access,
        "outlive_agent": outlive_agent,
    }
    if landlock_mounts_work():
        masked = masked_dirs()
        spec["read_only"] = _read_only_paths(policy)
        spec["hide"] = _hidden(policy, masked)
        spec["mask"] = masked
    if policy.proxied:
        spec["proxy"] = policy.network_proxy.spec()  # type: ignore[union-attr]
    return _launcher(argv, spec)


def supervised_argv(argv: Sequence[str]) -> list[str]:
    """No sandbox, only the launcher's lifecycle: the command and whatever it leaves running
    end when it ends, or when the agent does."""
    return [*_launcher_prefix(), "supervise", "--", *argv]


def confine(
    argv: Sequence[str], policy: SandboxPolicy | None, mechanism: str | None = None, *, outlive_agent: bool = False
) -> list[str]:
    """``argv`` wrapped so it runs inside ``policy``; unchanged without a policy or mechanism.
    ``outlive_agent``: no parent-death signal (a background process the user keeps alive)."""
    if policy is None or not policy.confines:
        return list(argv)
    mechanism = mechanism or detect_mechanism().name
    if mechanism == "bubblewrap":
        bwrap = shutil.which("bwrap") or "bwrap"
        sandboxed = bwrap_argv(argv, policy, bwrap, outlive_agent)
        retry = bwrap_reports_status(bwrap)  # the launcher runs it again if a path to cover vanished
        if policy.proxied:  # the launcher makes the namespace and the bridge, bubblewrap keeps it
            route = policy.network_proxy.launcher_policy(outlive_agent, retry)  # type: ignore[union-attr]
            return [*_launcher_prefix(), route, "--", *sandboxed]
        if retry:
            return [*_launcher_prefix(), "bwrap+outlive" if outlive_agent else "bwrap", "--", *sandboxed]
        return sandboxed
    if mechanism == "landlock":
        return landlock_argv(argv, policy, outlive_agent)
    return list(argv)


def command_argv(argv: Sequence[str], policy: SandboxPolicy | None, mechanism: str | None = None) -> list[str]:
    """How a command runs: confined when ``policy`` says so and a mechanism works, and in every
    case under the launcher's supervision. Bubblewrap's PID namespace is not enough alone: its
    parent-death signal is set only once the namespace is built, so an agent killed in those
    milliseconds left the sandbox to run the command with no one to end it."""
    confined = confine(argv, policy, mechanism)
    return confined if confined[:4] == _launcher_prefix() else supervised_argv(confined)


@functools.cache
def landlock_mounts_work() -> bool:
    """Whether the launcher can make a private mount namespace here (root, or a user namespace)."""
    spec = {"writable": [], "network": True, "read_only": ["/"]}
    try:
        done = subprocess.run(_launcher(["true"], spec), capture_output=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def proxy_route_works(mechanism: str) -> bool:
    """Whether the launcher can give a command its own network namespace with a bridge here
    (root, or unprivileged user namespaces): what allow-list mode needs."""
    probe = SandboxPolicy("workspace-write", network_proxy=ProxyRoute("/nonexistent/agent-proxy-probe"))
    try:
        argv = confine(["true"], probe, mechanism)
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, start_new_session=True)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0
