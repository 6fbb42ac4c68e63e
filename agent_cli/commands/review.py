"""``/review``: a turn with the review rubric (``prompts/review.md``) and read-only tools.

What it reviews:

- nothing typed, or ``--uncommitted``: the working tree against HEAD, untracked files included;
- ``--base BRANCH``: everything since the merge base with BRANCH (committed or not);
- ``--commit SHA``: that commit;
- ``@file ...``: those files, attached;
- free text alone: whatever it describes (the model explores with read-only tools); with a target
  it is extra focus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli import events as ev
from agent_cli.commands import git
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import expand
from agent_cli.commands.invocation import (
    Invocation,
    attachment_budget,
    file_settings,
    read_only_tool_names,
    run_model_turn,
)
from agent_cli.commands.text import Piece, Template
from agent_cli.context.prompts import prompt_library

_OPTION = re.compile(r"(?<!\S)--(?P<name>[\w-]+)(?:[ \t]+(?P<value>[^\s]+))?")
_REFERENCE = re.compile(r'@"[^"\n]+"|@\S+')
_DIFF_FILE = re.compile(r"^diff --git a/(.+?) b/", re.MULTILINE)
REVIEW_DIFF_BUDGET_FACTOR = 2  # a diff may take twice the budget of one tool output


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    target: str | None  # "uncommitted", "base", "commit" or None
    value: str | None  # the branch or the commit
    rest: str  # free text and @files, as typed


def parse_review_args(args: str) -> ReviewRequest:
    target: str | None = None
    value: str | None = None
    for match in _OPTION.finditer(args):
        name = match["name"]
        if name not in ("uncommitted", "base", "commit"):
            raise InputError(f"unknown /review option --{name}; use --uncommitted, --base BRANCH or --commit SHA")
        if target is not None:
            raise InputError("/review takes one of --uncommitted, --base BRANCH and --commit SHA")
        target = name
        if name != "uncommitted":
            value = match["value"]
            if not value or value.startswith("-"):
                raise InputError(f"--{name} needs a {'branch' if name == 'base' else 'commit'}")
    # --uncommitted takes no value: whatever followed it is free text
    rest = _OPTION.sub(lambda m: m["value"] or "" if m["name"] == "uncommitted" else "", args)
    return ReviewRequest(target, value, re.sub(r"[ \t]{2,}", " ", rest).strip())


def cap_diff(diff: str, max_bytes: int) -> str:
    data = diff.encode("utf-8")
    if len(data) <= max_bytes:
        return diff
    files = list(dict.fromkeys(_DIFF_FILE.findall(diff)))
    head = data[:max_bytes].decode("utf-8", errors="ignore")
    head = head[: head.rfind("\n") + 1] or head
    note = (
        f"[… diff truncated: {len(head.encode('utf-8')):,} of {len(data):,} bytes shown; read the rest of the "
        f"changed files with read_file. Every file in the diff: {', '.join(files)} …]"
    )
    return head + note + "\n"


async def material_for(inv: Invocation, request: ReviewRequest) -> tuple[str, str | None]:
    """(what to review, in words; the diff or commit to attach, if any)."""
    cwd = inv.session.config.cwd
    if request.target == "base":
        base = await git.merge_base(cwd, request.value)  # type: ignore[arg-type]
        diff = await git.diff_against(cwd, base)
        what = (
            f"The changes on the current branch since it left `{request.value}` (merge base {base[:12]}), "
            "committed or not, including untracked files. The diff is below."
        )
        return what, diff
    if request.target == "commit":
        shown = await git.show_commit(cwd, request.value)  # type: ignore[arg-type]
        return f"Commit `{request.value}`. Its message and diff are below.", shown
    if request.target == "uncommitted" or not request.rest:
        diff = await git.uncommitted_diff(cwd)
        what = (
            "The uncommitted changes in the working tree (against HEAD), including untracked files. The diff is below."
        )
        return what, diff
    return "", None


async def review_command(inv: Invocation) -> None:
    session = inv.session
    request = parse_review_args(inv.args)
    what, material = await material_for(inv, request)
    if material is not None and not material.strip():
        inv.emit(ev.Notice("nothing to review: there are no changes", title="review"))
        return
    max_bytes = attachment_budget(session)
    if request.rest and what:
        what += "\n\nThe user adds:"
    elif request.rest and not _REFERENCE.sub("", request.rest).strip():
        what = "The files attached below, as they are now (numbered lines). The user named them:"
    elif request.rest:
        what = (
            "What the user asks for is below (files they name are attached at the end); explore the "
            "repository with your read-only tools to find the code it concerns."
        )
    header = prompt_library(session.config.agent_home).render("review_request.md", target=what).rstrip("\n")
    pieces = [Piece(header, "literal")]
    if request.rest:
        pieces.append(Piece("\n\n" + request.rest, "argument"))
    if material:
        diff = cap_diff(material, max_bytes * REVIEW_DIFF_BUDGET_FACTOR)
        pieces.append(Piece(f"\n\n<diff>\n{diff.rstrip()}\n</diff>", "literal"))
    # @files in what the user typed attach; nothing else is expanded (arguments never run commands)
    expansion = await expand(
        Template(tuple(pieces)), cwd=session.config.cwd, max_bytes=max_bytes, run_command=None, **file_settings(session)
    )
    await run_model_turn(
        session,
        expansion.text,
        inv.emit,
        typed=inv.typed,
        recall=request.rest,  # not the options
        only_tools=read_only_tool_names(session),
    )
