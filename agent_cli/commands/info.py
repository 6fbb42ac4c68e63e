"""Commands that only report: ``/help``, ``/status``, ``/context``, ``/skills``, ``/diff``.

None of them touches the history, so a front end may run them while a turn is running.
"""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli import home_budget
from agent_cli.commands import git
from agent_cli.commands.context_usage import context_usage, memory_tokens, token_count
from agent_cli.commands.cost_command import cost_text
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.commands.mcp_commands import mcp_summary
from agent_cli.commands.tables import table
from agent_cli.context.skills import load_skills, skill_roots
from agent_cli.display import home_relative
from agent_cli.lsp.code_checks import CodeChecks
from agent_cli.models.registry import provider_location
from agent_cli.sandbox.policy import detect_mechanism
from agent_cli.sandbox.report import unenforced

EXPANSION_HELP = (
    ("@path", 'attach a file (numbered, size-capped) or a folder\'s listing; quote paths with spaces: @"a b.txt"'),
    ("!`cmd`", "run a command first (under the approval policy) and include its output and exit code"),
    ("\\@  \\!", "a literal @ or !"),
)


async def help_command(inv: Invocation) -> None:
    infos = inv.table.infos()
    if inv.args:
        name = inv.args.lstrip("/").split()[0]
        shown, lines = inv.table.help_lines(name)
        inv.emit(ev.Notice("\n".join(lines), title=f"/{shown}"))
        return
    builtins = [(f"/{i.name} {i.argument_hint}".rstrip(), i.description) for i in infos if i.source == "builtin"]
    custom = [
        (f"/{i.name} {i.argument_hint}".rstrip(), f"{i.description} ({i.source})")
        for i in infos
        if i.source != "builtin"
    ]
    text = "Commands\n" + table(builtins, "  ")
    if custom:
        text += "\n\nCustom commands\n" + table(custom, "  ")
    else:
        text += (
            "\n\nCustom commands: none (add .agent/commands/NAME.md in the repository or $AGENT_HOME/commands/NAME.md)"
        )
    text += "\n\nIn any prompt or command file\n" + table(list(EXPANSION_HELP), "  ")
    inv.emit(ev.Notice(text, title="help"))


async def status_command(inv: Invocation) -> None:
    session = inv.session
    config = session.config
    await session.count_exactly()  # /status promises exact counts, as /context does
    initial = session.initial or session.build_initial_context()
    count = token_count(session)  # nothing sent yet: what the first request will carry, as /context counts it
    total = count.total
    cached = f" ({100 * total.cached_input_tokens // total.input_tokens}% cached)" if total.input_tokens else ""
    provider = config.provider
    provider_text = f"{provider.id} ({provider.wire_api}"
    location = provider_location(provider)
    provider_text += f", {location})" if location else ")"
    docs = initial.project_docs.files
    doc_lines = [
        f"{home_relative(doc.path)} ({doc.size:,} bytes{', cut to fit project_doc_max_bytes' if doc.truncated else ''})"
        for doc in docs
    ] or ["none"]
    skills = ", ".join(skill.name for skill in initial.skills) or "none"
    network = session.approvals.network
    mode = network.mode if network is not None else "all" if config.network_access else "off"
    sandbox = f"{config.sandbox_mode} (network {mode}{sandbox_mechanism()})"
    rows = [
        ("model", session.model),
        ("provider", provider_text),
        ("directory", home_relative(config.cwd)),
        ("mode", session.mode),
        ("approval", config.approval_policy),
        ("sandbox", sandbox),
        *(
            [("", "not enforced here: " + ("; ".join(sandbox_limits(config.network_access)) or "nothing"))]
            if config.sandbox_mode != "danger-full-access"
            else []
        ),
        *network_rows(session),
        ("AGENTS.md", doc_lines[0]),
        *[("", line) for line in doc_lines[1:]],
        ("skills", f"{len(initial.skills)}: {skills}" if initial.skills else "none"),
        ("memory", memory_status(session)),
        *([("MCP", mcp_summary(session))] if session.mcp is not None else []),
        *checks_rows(session),
        *(
            [("plugins", ", ".join(f"{p.name} {p.version}".strip() for p in session.plugins.active))]
            if session.plugins.active
            else []
        ),
        ("context", f"{count.context_used:,} of {count.context_window:,} tokens used ({count.percent_left}% left)"),
        ("window", f"{session.window.tokens:,} tokens ({session.window.source}); {count.context_window:,} usable"),
        ("compact", compaction_status(session)),
        ("tokens", f"{total.input_tokens:,} in{cached}, {total.output_tokens:,} out this session"),
        ("cost", cost_text(session)),
        (
            "counting",
            f"{count.counting_method}, {count.accuracy}"
            + ("" if session.last_usage is None else " + the provider's reported usage"),
        ),
        ("session", session.id),
        ("disk", home_budget.describe(config.agent_home)),  # what the agent keeps under its home
    ]
    text = table(rows)
    if initial.warnings:
        text += "\n\nwarnings:\n" + "\n".join(f"  {warning}" for warning in initial.warnings)
    inv.emit(ev.Notice(text, title="status"))


def network_rows(session) -> list[tuple[str, str]]:
    """The sandbox's network mode and the domains in force, each with where it is written."""
    network = session.approvals.network
    if network is None:
        return []
    return [("network", network.summary()), *[("", line) for line in network.entry_lines()]]


def checks_rows(session) -> list[tuple[str, str]]:
    """Language servers, what they reported, the lint/test commands (agent_cli/lsp/)."""
    if not isinstance(session.checks, CodeChecks):
        return []
    lines = session.checks.status_lines()
    return [("checks", lines[0]), *[("", line) for line in lines[1:]]]


def compaction_status(session) -> str:
    """The threshold, the profile (lean in small windows) and how many compactions so far."""
    limit = session.auto_compact_limit
    when = f"at {limit:,} tokens" if limit is not None else "auto off"
    profile = "lean" if session.lean else "full"
    return f"{when}; {profile} profile; {session.compaction.count} so far (/compact show, /autocompact)"


def memory_status(session) -> str:
    book = session.memory
    if book is None:
        return "off (memory = false)"
    counts = ", ".join(f"{count} {scope}" for scope, count in book.counts().items())
    return f"{counts}; recalled into this context: {memory_tokens(session):,} tokens"


def sandbox_mechanism() -> str:
    """What enforces the sandbox here."""
    return f"; enforced by {detect_mechanism().detail}"


def sandbox_limits(network_access: bool) -> list[str]:
    """What the running kernel cannot enforce (sandbox/report.py)."""
    return unenforced(network_access)


async def context_command(inv: Invocation) -> None:
    await inv.session.count_exactly()  # /context promises exact counts
    if inv.session.mcp is not None and not inv.session.approvals.interactive:  # agent exec: count started servers
        await inv.session.mcp.manager.wait_started()
    inv.emit(context_usage(inv.session))


async def skills_command(inv: Invocation) -> None:
    config = inv.session.config
    found = load_skills(skill_roots(config.cwd, config.agent_home), inv.session.plugins.skills)
    if not found.skills:
        text = "no skills found (add .agent/skills/NAME/SKILL.md in the repository or $AGENT_HOME/skills/NAME/SKILL.md)"
    else:
        rows = [
            (f"${skill.name}", f"{skill.description} [{skill.source}] {home_relative(skill.path)}")
            for skill in found.skills
        ]
        text = table(rows) + "\n\nMention $name in a prompt to give the model that skill's instructions."
    if found.warnings:
        text += "\n\nwarnings:\n" + "\n".join(f"  {warning}" for warning in found.warnings)
    inv.emit(ev.Notice(text, title="skills"))


async def diff_command(inv: Invocation) -> None:
    if inv.args:
        raise InputError("/diff takes no arguments")
    diff = await git.uncommitted_diff(inv.session.config.cwd)
    inv.emit(ev.Notice(diff.rstrip() or "no uncommitted changes", title="diff"))
