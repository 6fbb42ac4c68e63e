"""Where agent definitions come from, and which one wins when two share a name.

Roots, highest precedence first: the repository's ``.agent/agents/``, ``$AGENT_HOME/agents/``,
extra sources given as ``(namespace, directory or file)`` pairs (plugins: their agents are
named ``namespace:agent``), then the bundled ``general`` and ``explore``. The first of a name wins; a
file that cannot be used is a warning naming it, never an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_cli.agents.definition import AgentDefinition, parse_agent_file
from agent_cli.context.project_doc import repository_root
from agent_cli.paths import bundled_prompts_dir

AGENTS_DIR = Path(".agent") / "agents"


@dataclass(frozen=True, slots=True)
class AgentSet:
    agents: dict[str, AgentDefinition]  # in precedence order
    warnings: tuple[str, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    @property
    def names(self) -> list[str]:
        return list(self.agents)


def bundled_agents_dir() -> Path:
    return bundled_prompts_dir() / "agents"


def agent_roots(
    cwd: Path, agent_home: Path, extra: Iterable[tuple[str, Path]] = ()
) -> list[tuple[str, Path, str | None]]:
    """(source, folder, namespace) in precedence order."""
    project = repository_root(Path(cwd))
    roots: list[tuple[str, Path, str | None]] = [("repo", project / AGENTS_DIR, None)] if project else []
    roots.append(("user", Path(agent_home) / "agents", None))
    roots += [(f"plugin {namespace}", Path(folder), namespace) for namespace, folder in extra]
    roots.append(("bundled", bundled_agents_dir(), None))
    return roots


def agent_files(root: Path) -> list[Path]:
    """The ``*.md`` files of a folder, sorted so the tool list is stable; a file (a plugin's
    manifest may name one) is itself; nothing when the folder does not exist."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(path for path in root.glob("*.md") if path.is_file())


def load_agents(cwd: Path, agent_home: Path, extra: Iterable[tuple[str, Path]] = ()) -> AgentSet:
    """Every usable agent definition; ``extra`` adds ``(namespace, directory)`` sources (plugins)."""
    agents: dict[str, AgentDefinition] = {}
    warnings: list[str] = []
    for source, root, namespace in agent_roots(cwd, agent_home, extra):
        try:
            files = agent_files(root)
        except OSError as exc:
            warnings.append(f"agents folder {root}: cannot list ({exc.strerror or exc}); skipped")
            continue
        for path in files:
            definition, problem = parse_agent_file(path, source, namespace)
            if definition is None:
                warnings.append(f"agent file {path}: {problem}; skipped")
                continue
            if problem:
                warnings.append(f"agent file {path}: {problem}")
            agents.setdefault(definition.name, definition)  # a higher-precedence root already won
    return AgentSet(agents, tuple(warnings))
