"""What the approval policy decides about one call before it runs: nothing to ask, a question
for the user (and what a "yes for the session" remembers), a lifted sandbox, or a refusal.

Deciding only; :class:`~agent_cli.session.approvals.Approvals` holds the session's state and asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.network.session_network import SessionNetwork
from agent_cli.sandbox.policy import SandboxPolicy, detect_mechanism, is_within
from agent_cli.session.safe_commands import approval_key, is_known_safe
from agent_cli.tools.apply_patch import patch_target
from agent_cli.tools.base import ToolError
from agent_cli.tools.mcp_names import PREFIX as MCP_PREFIX
from agent_cli.tools.patch_parser import AddFile, DeleteFile, UpdateFile, parse_patch

ESCALATE = "require_escalated"


@dataclass(frozen=True, slots=True)
class Need:
    """What the policy decided about one call before it runs."""

    ask: bool = False  # the user must approve
    denial: str | None = None  # refused outright (the model reads this)
    unsandboxed: bool = False  # approval (or a remembered one) lifts the sandbox for this call
    reason: str | None = None  # shown to the user with the question
    key: str | None = None  # what "approve for this session" remembers
    dirs: tuple[Path, ...] = ()  # out-of-sandbox folders a patch writes to


def keeps_alive(tool: str, args: dict[str, Any]) -> bool:
    """A background process meant to outlive the session: no rule or hook answers for the user."""
    return tool == "shell" and bool(args.get("keep_alive") and args.get("run_in_background"))


class CallAssessment:
    """The decisions, over the state :class:`~agent_cli.session.approvals.Approvals` keeps."""

    policy: str
    interactive: bool
    sandbox: SandboxPolicy | None  # None: commands and patches are not confined
    cwd: Path  # where patch paths are resolved from
    session_approved: set[str]
    approved_dirs: list[Path]  # outside the sandbox, approved for patches
    is_read_only_tool: Callable[[str], bool]  # the session's registry
    memory_user_writes: str  # the model's memory_save to the user scope (every project)
    network: SessionNetwork | None  # allowed and denied domains, the proxy (network/)

    @property
    def confined(self) -> bool:
        """A sandbox is configured (anything but danger-full-access)."""
        return self.sandbox is not None and self.sandbox.confines

    @property
    def enforced(self) -> bool:
        """Commands really run confined: a sandbox is configured and a mechanism works here."""
        return self.confined and detect_mechanism().name != "none"

    def assess(self, tool: str, args: dict[str, Any]) -> Need:
        if tool == "shell":
            return self._assess_shell(args)
        if tool == "apply_patch":
            return self._assess_patch(args)
        if tool.startswith(MCP_PREFIX):
            return self._assess_mcp(tool)
        if tool == "memory_save" and args.get("scope") == "user":
            return self._assess_user_memory()
        if tool == "web_fetch":
            return self._assess_web_fetch(args)
        return Need()

    def _assess_user_memory(self) -> Need:
        """A user-scope memory is recalled in every project: text one repository's content led the
        model to write would reach the others. The user decides (``memory_user_writes``)."""
        if self.memory_user_writes == "allow" or "memory_save:user" in self.session_approved:
            return Need()
        refusal = "memory_save was not run: saving to the user scope (every project) needs the user's approval"
        if self.memory_user_writes == "deny" or (self.policy == "never" and self.interactive):
            return Need(
                denial=f"{refusal}, and `memory_user_writes` / the approval policy does not allow it. "
                "Save it to the project scope instead, or ask the user to add it with /memory add."
            )
        if not self.interactive:
            return Need(
                denial=f'{refusal}; this session cannot ask (set `memory_user_writes = "allow"` to let it). '
                "Save it to the project scope instead."
            )
        return Need(ask=True, key="memory_save:user", reason="Save a memory for every project (user scope)")

    def _assess_web_fetch(self, args: dict[str, Any]) -> Need:
        """By the sandbox's domain lists: a denied domain is refused, an allowed one fetched; else,
        without network in the sandbox, the user may approve the domain (once or for the session)."""
        from urllib.parse import urlsplit

        try:
            url = urlsplit(str(args.get("url", "")))
            domain, port = (url.hostname or "").lower(), url.port or (443 if url.scheme == "https" else 80)
        except ValueError:
            domain, port = "", 0
        if not domain:
            return Need()  # the tool reports the bad URL
        if self.network is not None and (verdict := self.network.fetch_verdict(domain, port)) is not None:
            why = f"web_fetch was not run: {domain} was refused ({verdict.by})"
            return Need(unsandboxed=True) if verdict.allowed else Need(denial=why)  # the lists lift the sandbox
        if self.sandbox is None or self.sandbox.network_access:
            return Need()
        key = f"web_fetch:{domain}"
        if key in self.session_approved:
            return Need(unsandboxed=True)
        if not self.interactive or self.policy == "never":
            return Need(
                denial=(
                    f"web_fetch was not run: network access is off in the {self.sandbox.mode} sandbox "
                    f"(network_access = false), {domain} is not in the allowed domains, and approval policy "
                    f"'{self.policy}' cannot ask to fetch from it."
                )
            )
        return Need(
            ask=True, unsandboxed=True, key=key, reason=f"Fetch from {domain} (the sandbox has no network access)"
        )

    def _assess_mcp(self, tool: str) -> Need:
        """An MCP tool without ``readOnlyHint`` is a write: ``untrusted`` asks before each one
        (the other policies run it; MCP servers are not sandboxed)."""
        if self.policy != "untrusted" or self.is_read_only_tool(tool) or tool in self.session_approved:
            return Need()
        return Need(ask=True, key=tool, reason="This MCP tool may change things (it is not marked read-only)")

    def _assess_shell(self, args: dict[str, Any]) -> Need:
        command = str(args.get("command", ""))
        key = approval_key("shell", args)
        if keeps_alive("shell", args):
            return self._assess_keep_alive(args)
        if self.confined and args.get("sandbox_permissions") == ESCALATE:
            if self.policy == "never":
                return Need(
                    denial=(
                        "the command was not run: it asks to run outside the sandbox, and approval policy "
                        f"'never' does not allow that. Run it inside the {self.sandbox.mode} sandbox "  # type: ignore[union-attr]
                        "or tell the user what is needed."
                    )
                )
            if "unsandboxed:" + key in self.session_approved:
                return Need(unsandboxed=True)
            why = str(args.get("justification") or "").strip() or "no justification given"
            return Need(ask=True, unsandboxed=True, key="unsandboxed:" + key, reason=f"Run outside the sandbox: {why}")
        if self.confined and "unsandboxed:" + key in self.session_approved:
            return Need(unsandboxed=True)
        if key in self.session_approved:
            return Need()
        if self.confined and not self.enforced and self.interactive and self.policy != "never":
            # no sandbox can hold the command: the person decides, even for "read-only" ones
            return Need(ask=True, key=key, reason="No sandbox mechanism works here: this command would run unconfined.")
        if self.policy == "untrusted" and not is_known_safe(command):
            return Need(ask=True, key=key)
        return Need()

    def _assess_keep_alive(self, args: dict[str, Any]) -> Need:
        """A process that outlives the session needs the user's explicit yes, every time (never
        remembered for the session, never given by a policy)."""
        if not self.interactive or self.policy == "never":
            return Need(
                denial=(
                    "the command was not run: keep_alive (running on after the session ends) needs the user's "
                    "approval, and this session cannot ask. Run it without keep_alive: it then stops with the session."
                )
            )
        escalate = self.confined and args.get("sandbox_permissions") == ESCALATE
        return Need(
            ask=True,
            unsandboxed=escalate,
            reason="Keep this background process running after the session ends (it will not be stopped)",
        )

    def _assess_patch(self, args: dict[str, Any]) -> Need:
        denials = self.patch_denials(args)
        if denials:
            why = "; ".join(reason for _, reason in denials)
            if any(self.sandbox.protected(path) for path, _ in denials):  # type: ignore[union-attr]
                # config, hooks, MCP servers, git: each such write is asked for, never approved
                # by folder or for the session, and refused where nobody can be asked
                if self.policy == "never":
                    return Need(
                        denial=f"apply_patch was not run: {why}. Approval policy 'never' cannot approve a write to a protected path."
                    )
                return Need(ask=True, unsandboxed=True, reason=f"This patch writes a protected path: {why}")
            dirs = tuple(sorted({path.parent for path, _ in denials}))
            if all(any(is_within(d, a) for a in self.approved_dirs) for d in dirs):
                return Need(unsandboxed=True)
            if self.policy == "never":
                return Need(
                    denial=f"apply_patch was not run: {why}. Approval policy 'never' cannot approve writes outside the sandbox."
                )
            return Need(ask=True, unsandboxed=True, dirs=dirs, reason=f"This patch writes outside the sandbox: {why}")
        if self.policy == "untrusted" and "apply_patch" not in self.session_approved:
            return Need(ask=True, key="apply_patch")
        return Need()

    def patch_denials(self, args: dict[str, Any]) -> list[tuple[Path, str]]:
        """Each target of the patch the sandbox does not let it write, with the reason."""
        if not self.confined:
            return []
        try:
            ops = parse_patch(str(args.get("patch", "")))
        except ToolError:
            return []  # the tool itself reports the syntax error
        cwd = self.cwd
        targets: list[Path] = []
        for op in ops:
            if isinstance(op, DeleteFile):
                targets.append(patch_target(cwd, op.path, keep_link=True))  # as the tool resolves it
            elif isinstance(op, (AddFile, UpdateFile)):
                targets.append(patch_target(cwd, op.path))
                if isinstance(op, UpdateFile) and op.move_to:
                    targets.append(patch_target(cwd, op.move_to))
        out = []
        for path in targets:
            if (reason := self.sandbox.write_denial(path)) is not None:  # type: ignore[union-attr]
                out.append((path, reason))
        return out
