"""``/ps`` (``/tasks``): the session's background processes; ``/ps kill ID`` stops one."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.invocation import Invocation

NONE_RUNNING = "no background processes (the model starts them with shell run_in_background)"


def describe(info: ev.BackgroundProcessInfo) -> str:
    """One process: id, pid, state, time, command, then its last lines indented."""
    state = "running" if info.exit_code is None else ("killed" if info.killed else f"exit {info.exit_code}")
    kept = ", keep_alive" if info.keep_alive else ""
    lines = [f"{info.id}  pid {info.pid}  {state}{kept}  {info.runtime:.0f} s  {info.command}"]
    lines += [f"    {line}" for line in info.last_lines]
    return "\n".join(lines)


def exit_notice(info: ev.BackgroundProcessInfo) -> str:
    how = "was stopped" if info.killed else f"exited with code {info.exit_code}"
    head = f"background process {info.id} (`{info.command}`, pid {info.pid}) {how} after {info.runtime:.1f} s"
    return head + "".join(f"\n    {line}" for line in info.last_lines)


async def ps_command(inv: Invocation) -> None:
    background = inv.session.background
    words = inv.args.split()
    if words[:1] == ["kill"] and len(words) == 2:
        proc = background.get(words[1])
        if proc is None:
            inv.emit(ev.Notice(f"no background process {words[1]!r}", title="ps"))
            return
        await background.kill(proc)
        inv.emit(ev.Notice(f"stopped {proc.id} (pid {proc.pid})", title="ps"))
        return
    infos = tuple(proc.info() for proc in background.list())
    inv.emit(ev.BackgroundProcessList(infos))
    inv.emit(ev.Notice("\n".join(describe(info) for info in infos) if infos else NONE_RUNNING, title="ps"))
