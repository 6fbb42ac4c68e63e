"""``/init``: the model looks at the repository (read-only) and the harness writes ``AGENTS.md``.

The model only answers with the file's content, so an existing ``AGENTS.md`` is never replaced
without a yes: the TUI asks through an approval request; ``agent exec`` cannot ask, so it refuses
unless the user typed ``/init --force``.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.command_writes import approve_writes, write_file
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import workspace_root
from agent_cli.commands.invocation import Invocation, read_only_tool_names, run_model_turn
from agent_cli.context.prompts import prompt_library
from agent_cli.lsp.suggest import suggestion_note

FILE_NAME = "AGENTS.md"
_FENCED = re.compile(r"\A```[\w-]*[ \t]*\n(?P<body>.*?)\n```[ \t]*\Z", re.DOTALL)


def strip_fence(answer: str) -> str:
    """The content inside a code fence wrapped around the whole answer (models do it anyway)."""
    answer = answer.strip()
    match = _FENCED.match(answer)
    return match["body"].strip() if match else answer


def refuse_without_a_user(inv: Invocation, path: Path) -> None:
    if not inv.session.approvals.interactive:
        raise InputError(
            f"{path} already exists and /init does not overwrite it without confirmation; "
            "run `/init --force` to replace it with a new version"
        )


async def confirm_overwrite(inv: Invocation, path: Path, content: str) -> bool:
    """Ask with the new version in view (the question's reason carries it as a preview)."""
    decision = await inv.session.approvals.request_decision(
        "init", "init", f"replace {path} with this new version", content, inv.emit
    )
    return decision.decision != "deny"


async def init_command(inv: Invocation) -> None:
    if inv.args not in ("", "--force"):
        raise InputError("/init takes no arguments except --force (replace an existing AGENTS.md)")
    session = inv.session
    path = workspace_root(session.config.cwd) / FILE_NAME
    existed = path.exists()
    ask = existed and inv.args != "--force"
    if ask:
        refuse_without_a_user(inv, path)  # exec: before spending a model turn

    async def write(answer: str | None) -> ev.Event:
        content = strip_fence(answer or "")
        if not content:
            inv.emit(ev.Error(f"the model returned no content; {path} was not written"))
            return ev.TurnFailed("no AGENTS.md content")
        if path.exists() and not existed:
            inv.emit(ev.Error(f"{path} appeared while /init was running; it was left as it is"))
            return ev.TurnFailed("AGENTS.md appeared meanwhile")
        if ask and not await confirm_overwrite(inv, path, content):
            inv.emit(ev.Notice(f"kept the existing {path}", title="init"))
            return ev.TurnComplete(answer)
        try:  # decided as a model's write of AGENTS.md would be (rules, policy, sandbox, the question)
            (target,) = await approve_writes(session, inv.emit, "/init", [(path, content + "\n")])
        except InputError as exc:
            inv.emit(ev.Error(exc.message))
            return ev.TurnFailed(exc.message)
        try:
            write_file(target, content + "\n")
        except OSError as exc:
            inv.emit(ev.Error(f"cannot write {path}: {exc.strerror or exc}"))
            return ev.TurnFailed(str(exc))
        verb = "updated" if existed else "wrote"
        inv.emit(ev.Notice(f"{verb} {path} ({len(content.splitlines())} lines)", title="init"))
        return ev.TurnComplete(answer)

    config = session.config
    if note := suggestion_note(path.parent, {"lint": config.lint_command, "test": config.test_command}):
        inv.emit(ev.Notice(note, title="init"))  # the project's checks, run after each turn that changes files
    text = prompt_library(session.config.agent_home).render("init_request.md", path=FILE_NAME)
    # Only --force can be typed: no words to recall memories by (the model has memory_search).
    await run_model_turn(
        session, text, inv.emit, typed=inv.typed, recall="", only_tools=read_only_tool_names(session), on_complete=write
    )
