"""The fixed part of every request: the system prompt and the initial context items.

Both are byte-stable for the same inputs, which is what lets provider prompt caches hit. Items,
in order: a developer message with the approval and sandbox rules; user-role fragments with the
AGENTS.md files (if any), the skills list (if any) and ``<environment_context>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agent_cli.context.environment import EnvironmentContext
from agent_cli.context.fragments import PERMISSIONS
from agent_cli.context.modes import check_mode, mode_guidance
from agent_cli.context.project_doc import DEFAULT_MAX_BYTES, ProjectDocs, load_project_docs
from agent_cli.context.prompts import PromptError, PromptLibrary, prompt_library
from agent_cli.context.skills import Skill, load_skills, render_skills_list, skill_roots
from agent_cli.items import Message
from agent_cli.paths import agent_home as default_agent_home


@dataclass(frozen=True)
class InitialContext:
    items: list[Message]
    environment: EnvironmentContext  # keep it to diff against on later turns
    skills: tuple[Skill, ...]
    project_docs: ProjectDocs
    warnings: tuple[str, ...]  # for the user (not the model): cut files, invalid skills...


def build_instructions(
    mode: str = "agent", agent_home: Path | None = None, memory: bool = True, lean: bool = False
) -> str:
    """The system prompt: identity, tool guidance, workflow, ``mode``'s guidance and, when memory
    is on, how to use it (``memory.md``). ``lean``: the short prompt of the lean profile
    (``lean/system.md``; memory is then one of the tools behind ``tool_search``)."""
    library = prompt_library(agent_home)
    guidance = mode_guidance(mode, library)
    if lean:
        return library.render("lean/system.md", mode_guidance=guidance).strip() + "\n"
    if memory:  # before the mode's guidance, which ends the prompt (system.md stays as users override it)
        guidance = library.render("memory.md").strip() + "\n\n" + guidance
    return library.render("system.md", mode_guidance=guidance).strip() + "\n"


def permissions_text(
    approval_policy: str, sandbox_mode: str, network_access: bool, library: PromptLibrary | None = None
) -> str:
    """The developer fragment with the approval and sandbox rules."""
    library = library or prompt_library()
    try:
        sandbox_rules = library.render(f"permissions/sandbox_{sandbox_mode}.md").strip()
        approval_rules = library.render(f"permissions/approval_{approval_policy}.md").strip()
    except PromptError as exc:
        raise ValueError(
            f"no rules for sandbox_mode {sandbox_mode!r} / approval_policy {approval_policy!r}: {exc}"
        ) from None
    text = library.render(
        "permissions.md",
        sandbox_mode=sandbox_mode,
        sandbox_rules=sandbox_rules,
        network_access="enabled" if network_access else "restricted",
        approval_policy=approval_policy,
        approval_rules=approval_rules,
    )
    return PERMISSIONS.wrap(text.strip())


def build_initial_context(
    cwd: Path,
    agent_home: Path | None = None,
    *,
    mode: str = "agent",
    approval_policy: str = "on-request",
    sandbox_mode: str = "workspace-write",
    network_access: bool = False,
    writable_roots: Iterable[str | Path] = (),
    project_doc_max_bytes: int = DEFAULT_MAX_BYTES,
    fallback_filenames: Iterable[str] = (),
    context_window: int = 200_000,
    now: datetime | None = None,
    plugin_skills: Iterable[Skill] = (),
    hidden: Callable[[Path], object] | None = None,
) -> InitialContext:
    """Everything sent before the first user message (the system prompt aside)."""
    check_mode(mode)  # the mode itself lives in the system prompt; fail early on a bad one
    home = Path(agent_home) if agent_home is not None else default_agent_home()
    library = prompt_library(home)
    docs = load_project_docs(cwd, home, project_doc_max_bytes, fallback_filenames, hidden)
    skill_set = load_skills(skill_roots(cwd, home), plugin_skills, hidden)
    skills_text, skill_warnings = render_skills_list(skill_set.skills, context_window, library)
    environment = EnvironmentContext.detect(cwd, approval_policy, sandbox_mode, network_access, writable_roots, now=now)

    items = [Message("developer", permissions_text(approval_policy, sandbox_mode, network_access, library))]
    if docs.text:
        items.append(Message("user", docs.text))
    if skills_text:
        items.append(Message("user", skills_text))
    items.append(Message("user", environment.to_xml()))
    warnings = (*docs.warnings, *skill_set.warnings, *skill_warnings)
    return InitialContext(items, environment, skill_set.skills, docs, warnings)
