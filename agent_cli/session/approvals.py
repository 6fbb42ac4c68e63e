"""When to ask the user before a tool runs, what they already approved, and what a call may do.

Policies (``approval_policy``):
- ``untrusted``: ask before anything but known read-only commands (and before every patch);
  a command that then fails in the sandbox may be re-run outside it if the user agrees.
- ``on-request``: run in the sandbox without asking; ask when the model requests escalation
  (``sandbox_permissions: "require_escalated"``) or a patch writes outside the sandbox.
- ``on-failure``: run in the sandbox without asking; when a command fails, ask to re-run it
  outside the sandbox.
- ``never``: never ask. Escalations and out-of-sandbox writes are refused.

The session emits :class:`~agent_cli.events.ApprovalRequest` carrying a future; the TUI answers
it from the user. ``agent exec`` cannot ask: whatever would be asked is denied and the model
reads the denial as the tool's error. Where no sandbox mechanism works, an interactive session
also asks before every command that is not known read-only.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.config import APPROVAL_POLICIES, Config
from agent_cli.network.gate import NetworkGate
from agent_cli.network.session_network import SessionNetwork
from agent_cli.permissions.engine import NO_RULE, Permissions, Verdict
from agent_cli.sandbox.policy import SandboxPolicy, detect_mechanism, is_within
from agent_cli.session.safe_commands import approval_key, is_known_safe, suggest_rule
from agent_cli.tools.apply_patch import patch_target
from agent_cli.tools.base import ToolError, ToolResult
from agent_cli.tools.mcp_names import PREFIX as MCP_PREFIX
from agent_cli.tools.mcp_names import display_call
from agent_cli.tools.patch_parser import AddFile, DeleteFile, UpdateFile, parse_patch
from agent_cli.tools.process import TIMEOUT_EXIT_CODE
from agent_cli.tools.shell_env import EnvPolicy, command_env

Emit = Callable[[ev.Event], None]
ESCALATE = "require_escalated"
# Output that suggests the sandbox, not the command, was the problem.
SANDBOX_SYMPTOMS = (
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "cannot apply the sandbox",
)


def summarize(tool: str, args: dict[str, Any]) -> str:
    if tool == "shell":
        return str(args.get("command", ""))
    if tool == "apply_patch":
        return str(args.get("patch", ""))
    return display_call(tool, args) or f"{tool} {args}"


@dataclass(frozen=True, slots=True)
class Need:
    """What the policy decided about one call before it runs."""

    ask: bool = False  # the user must approve
    denial: str | None = None  # refused outright (the model reads this)
    unsandboxed: bool = False  # approval (or a remembered one) lifts the sandbox for this call
    reason: str | None = None  # shown to the user with the question
    key: str | None = None  # what "approve for this session" remembers
    dirs: tuple[Path, ...] = ()  # out-of-sandbox folders a patch writes to


def provider_key_names(config: Config) -> list[str]:
    names = [config.provider.env_key] if config.provider.env_key else []
    for table in config.raw.get("model_providers", {}).values():
        if isinstance(table, dict) and isinstance(table.get("env_key"), str):
            names.append(table["env_key"])
    return names


def env_scrubber(config: Config) -> Callable[[Mapping[str, str]], dict[str, str]]:
    """The environment a command gets from a given one (``[shell_environment_policy]``)."""
    policy = EnvPolicy.from_table(config.raw.get("shell_environment_policy"))
    return functools.partial(command_env, policy, secret_names=provider_key_names(config))


def use_exec_default(config: Config) -> Config:
    """``agent exec`` cannot ask: unless the user chose an approval policy, it runs with ``never``."""
    return config if "approval_policy" in config.raw else replace(config, approval_policy="never")


def keeps_alive(tool: str, args: dict[str, Any]) -> bool:
    """A background process meant to outlive the session: no rule or hook answers for the user."""
    return tool == "shell" and bool(args.get("keep_alive") and args.get("run_in_background"))


@dataclass(frozen=True, slots=True)
class Confinement:
    """What one call may touch, as its ToolContext carries it (tools/base.py)."""

    sandbox: SandboxPolicy | None  # None: not confined
    writable_roots: tuple[Path, ...]  # where apply_patch may write; empty: anywhere
    env: dict[str, str] | None  # the scrubbed environment; None: inherit
    read_denied: Callable[[Path], Any] | None  # Read deny rules hide these paths
    network: NetworkGate | None = None  # the domain lists and this session's answers (network/)


class Approvals:
    def __init__(
        self,
        policy: str,
        interactive: bool,
        sandbox: SandboxPolicy | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ):
        self.policy = policy
        self.interactive = interactive
        self.sandbox = sandbox  # None: commands and patches are not confined
        self.env = env  # None: commands inherit the agent's environment
        self.cwd = cwd or Path.cwd()  # where patch paths are resolved from
        self.session_approved: set[str] = set()
        self.approved_dirs: list[Path] = []  # outside the sandbox, approved for patches
        self._unsandboxed_calls: set[str] = set()
        self.is_read_only_tool: Callable[[str], bool] = lambda name: False  # the session's registry
        self.permissions = Permissions(cwd=self.cwd)  # rules (agent_cli/permissions/); the session loads them
        self.verdicts: dict[str, Verdict] = {}  # call id -> the rules' verdict, for the call's end event
        # "Yes, and don't ask again": saves an allow rule (the session sets it; None: not offered)
        self.save_rule: Callable[[str, str | None], str] | None = None
        self.rule_files: Callable[[], tuple[str, ...]] = lambda: ()  # where a rule may be saved
        self.memory_user_writes = "ask"  # the model's memory_save to the user scope (every project)
        self.network: SessionNetwork | None = None  # allowed and denied domains, the proxy (network/)
        self.updated_arguments: dict[str, dict[str, Any]] = {}  # call id -> arguments an approval replaced
        # PermissionRequest hooks answer a question before the user sees it; Notification hooks
        # hear that one waits (the session sets both: session/hook_events.py)
        self.question_hooks: Callable[[str, dict[str, Any], Emit], Awaitable[tuple[str | None, str]]] | None = None
        self.question_shown: Callable[[str, Emit], None] | None = None

    @classmethod
    def from_config(cls, config: Config, interactive: bool) -> Approvals:
        sandbox = SandboxPolicy.create(config.sandbox_mode, config.cwd, config.writable_roots, config.network_access)
        env = env_scrubber(config)(os.environ)
        approvals = cls(config.approval_policy, interactive, sandbox, env, config.cwd)
        approvals.memory_user_writes = config.memory_user_writes
        return approvals

    # --- what a front end changes for the session (commands/conversation.py) -------------

    def set_policy(self, policy: str) -> None:
        """When calls ask, from the next call on."""
        if policy not in APPROVAL_POLICIES:
            raise ValueError(f"unknown approval policy {policy!r}; choose one of: {', '.join(APPROVAL_POLICIES)}")
        self.policy = policy

    def set_sandbox(self, sandbox: SandboxPolicy) -> None:
        """Where later commands and patches run; a call already running keeps its own."""
        self.sandbox = sandbox

    def grant(self, keys: Iterable[str]) -> None:
        """Approved for the rest of the session, as a "yes, for this session" (``apply_patch``:
        every edit inside the sandbox; an MCP tool's name; a command's approval key)."""
        self.session_approved.update(keys)

    def withdraw(self, keys: Iterable[str]) -> None:
        self.session_approved.difference_update(keys)

    # --- the sandbox as it applies here --------------------------------------------------

    @property
    def confined(self) -> bool:
        """A sandbox is configured (anything but danger-full-access)."""
        return self.sandbox is not None and self.sandbox.confines

    @property
    def enforced(self) -> bool:
        """Commands really run confined: a sandbox is configured and a mechanism works here."""
        return self.confined and detect_mechanism().name != "none"

    def confinement(self, call_id: str) -> Confinement:
        """The sandbox and environment ``call_id`` runs under: none for an approved escalation."""
        sandbox = None if call_id in self._unsandboxed_calls or not self.confined else self.sandbox
        env = self.env
        if sandbox is not None and self.network is not None and (route := self.network.route()) is not None:
            sandbox = replace(sandbox, network_proxy=route)  # the one way out: the proxy
            env = {**(os.environ if env is None else env), **self.network.command_env(route)}
        return Confinement(
            sandbox=sandbox,
            writable_roots=tuple(sandbox.writable_roots) if sandbox is not None else (),
            env=env,
            read_denied=self.permissions.read_denied if self.permissions.hides_any() else None,
            network=self.network.gate if self.network is not None else None,
        )

    def unsandbox(self, call_id: str) -> None:
        self._unsandboxed_calls.add(call_id)

    def is_unsandboxed(self, call_id: str) -> bool:
        return call_id in self._unsandboxed_calls

    def forget(self, call_id: str) -> None:
        self._unsandboxed_calls.discard(call_id)

    def end_call(self, call_id: str) -> Verdict | None:
        """What was kept for a call that has ended, let go: its lifted sandbox, and the rules'
        verdict, returned for the call's end event."""
        self.forget(call_id)
        self.updated_arguments.pop(call_id, None)
        return self.verdicts.pop(call_id, None)

    # --- deciding ------------------------------------------------------------------------

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

    # --- asking --------------------------------------------------------------------------

    def judge(self, call_id: str, tool: str, args: dict[str, Any]) -> Verdict:
        """The permission rules' verdict on a call, remembered for /permissions and the call's end."""
        verdict = self.permissions.decide(tool, args)
        if verdict is not NO_RULE:
            self.verdicts[call_id] = verdict
            self.permissions.note(tool, summarize(tool, args), verdict)
        return verdict

    def allowed_by_rule(self, call_id: str, tool: str, args: dict[str, Any]) -> str | None:
        """An allow rule answers the question; it does not lift the sandbox's hard limits."""
        need = self.assess(tool, args)
        if tool == "web_fetch" and (need.unsandboxed or need.denial):
            self.unsandbox(call_id)  # WebFetch(domain:…) is the user's yes for that domain, asked or not
            return None
        if need.denial:
            return need.denial
        if need.unsandboxed:
            self.unsandbox(call_id)
        return None

    async def check(
        self, call_id: str, tool: str, args: dict[str, Any], emit: Emit, hook: str | None = None
    ) -> str | None:
        """None when the call may run; otherwise the denial message for the model. ``hook`` is a
        PreToolUse hook's answer: its allow answers the question and its ask forces one; a deny
        rule wins over both."""
        verdict = self.judge(call_id, tool, args)
        if verdict.decision == "deny":
            rule = verdict.rules[0]
            return f"{tool} was not run: the permission rule `{rule.text}` ({rule.source}) denies it"
        if hook == "ask":
            return await self.ask(call_id, tool, args, emit, reason="a PreToolUse hook asked for approval")
        if (hook == "allow" or verdict.decision == "allow") and not keeps_alive(tool, args):
            return self.allowed_by_rule(call_id, tool, args)  # keep_alive: the user's own yes, every time
        if verdict.decision == "ask":
            rule = verdict.rules[0]
            reason = verdict.reason or f"the permission rule `{rule.text}` asks first"
            return await self.ask(call_id, tool, args, emit, reason=reason)
        need = self.assess(tool, args)
        if need.denial:
            return need.denial
        if not need.ask:
            if need.unsandboxed:
                self.unsandbox(call_id)
            return None
        return await self._ask(call_id, tool, args, emit, need)

    async def ask(
        self, call_id: str, tool: str, args: dict[str, Any], emit: Emit, reason: str | None = None
    ) -> str | None:
        """Ask whatever the policy says (a PreToolUse hook forced the question)."""
        need = self.assess(tool, args)
        if need.denial or not need.ask:
            need = Need(ask=True, key=approval_key(tool, args), reason=reason)
        elif reason:
            need = replace(need, reason=f"{reason}. {need.reason}" if need.reason else reason)
        return await self._ask(call_id, tool, args, emit, need)

    async def offer_rerun(self, call_id: str, args: dict[str, Any], result: ToolResult, emit: Emit) -> bool:
        """After a shell command failed in the sandbox: ask to run it again outside (True = yes)."""
        if result.success or result.exit_code in (None, TIMEOUT_EXIT_CODE) or self.is_unsandboxed(call_id):
            return False
        if self.policy not in ("on-failure", "untrusted") or not self.enforced or not self.interactive:
            return False
        need = Need(
            ask=True,
            unsandboxed=True,
            key="unsandboxed:" + approval_key("shell", args),
            reason=f"The command failed in the sandbox (exit code {result.exit_code}). Run it again without the sandbox?",
        )
        return await self._ask(call_id, "shell", args, emit, need) is None

    def failure_hint(self, call_id: str, tool: str, result: ToolResult) -> str | None:
        """Under on-request, tell the model how to escalate when the sandbox likely got in the way."""
        if tool != "shell" or result.success or self.policy != "on-request" or not self.interactive:
            return None
        if not self.enforced or self.is_unsandboxed(call_id):
            return None
        if not any(symptom in result.output for symptom in SANDBOX_SYMPTOMS):
            return None
        return (
            f"(This ran in the {self.sandbox.mode} sandbox. If the sandbox blocked it, call shell again "  # type: ignore[union-attr]
            f'with "sandbox_permissions": "{ESCALATE}" and a one-sentence "justification"; the user will be asked.)'
        )

    @staticmethod
    async def request_decision(
        call_id: str,
        tool: str,
        summary: str,
        reason: str | None,
        emit: Emit,
        suggested_rule: str | None = None,
        rule_files: tuple[str, ...] = (),
    ) -> ev.ApprovalDecision:
        """Ask the user through the front end (it answers the request's future) and wait."""
        future: asyncio.Future[ev.ApprovalDecision] = asyncio.get_running_loop().create_future()
        emit(
            ev.ApprovalRequest(
                call_id,
                tool,
                summary,
                reason,
                future=future,
                suggested_rule=suggested_rule,
                rule_files=rule_files if suggested_rule else (),
            )
        )
        return await future

    async def _ask(self, call_id: str, tool: str, args: dict[str, Any], emit: Emit, need: Need) -> str | None:
        if self.question_hooks is not None:
            answer, message = await self.question_hooks(tool, args, emit)
            if answer == "deny":
                return f"{tool} was not run: a PermissionRequest hook denied it" + (f": {message}" if message else "")
            # A hook's yes answers for the user inside the sandbox; leaving it (an escalation, a write
            # outside the writable folders, a re-run outside) and keep_alive stay the user's own yes.
            if answer == "allow" and not keeps_alive(tool, args) and not need.unsandboxed and not need.dirs:
                return None
        if not self.interactive:
            why = need.reason or f"approval policy '{self.policy}' requires the user's approval"
            return f"{tool} was not run: {why}. This session cannot ask the user (non-interactive), so it was denied."
        # No allow rule answers for a command the rules cannot see through (permissions/see_through.py).
        unseen = (verdict := self.verdicts.get(call_id)) is not None and verdict.decision == "ask" and verdict.reason
        suggestion = suggest_rule(tool, args) if self.save_rule is not None and not need.dirs and not unseen else None
        if self.question_shown is not None:
            self.question_shown(tool, emit)
        decision = await self.request_decision(
            call_id, tool, summarize(tool, args), need.reason, emit, suggestion, self.rule_files()
        )
        if decision.decision == "deny":
            reason = f": {decision.reason}" if decision.reason else ""
            return f"the user denied this {tool} call{reason}"
        if decision.arguments is not None:  # the approver changed the call (the SDK's updatedInput)
            self.updated_arguments[call_id] = decision.arguments
        if decision.decision == "approve_always" and decision.rule and self.save_rule is not None:
            emit(ev.Notice(self.save_rule(decision.rule, decision.save_to)))
        if decision.decision in ("approve_session", "approve_always"):
            if need.key:
                self.session_approved.add(need.key)
            self.approved_dirs.extend(need.dirs)
        if need.unsandboxed:
            self.unsandbox(call_id)
        return None
