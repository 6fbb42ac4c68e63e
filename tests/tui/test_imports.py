"""`agent exec` and the core never load Textual; the app paints before the HTTP library loads."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=full_env,
        cwd=REPO,
        check=False,
    )


def test_exec_and_the_core_never_import_textual():
    done = run_python("""
        import sys
        import agent_cli.cli, agent_cli.headless.exec, agent_cli.session
        from agent_cli.session import Session
        loaded = sorted(m for m in sys.modules
                        if m.split('.')[0] in ('textual', 'rich') or m.startswith('agent_cli.tui'))
        print(loaded)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_first_screen_paints_before_the_http_library_and_the_sdk_are_imported(tmp_path):
    done = run_python(
        """
        import asyncio, sys
        from pathlib import Path
        from agent_cli.config import load_config
        from agent_cli.tui.app import AgentApp

        seen = {}

        class Probe(AgentApp):
            def __init__(self, config):
                super().__init__(config)
                start = self.background.start

                def probe():
                    seen.setdefault('http_at_first_paint', 'httpx2' in sys.modules)
                    start()

                self.background.start = probe

        async def main():
            config = load_config(Path.cwd(), ['model_provider="openai-chat"', 'model="test-model"'])
            app = Probe(config)
            async with app.run_test() as pilot:
                await app.workers.wait_for_complete()
                await pilot.pause()
            print(seen['http_at_first_paint'], 'httpx2' in sys.modules, 'openai' in sys.modules)

        asyncio.run(main())
    """,
        env={"AGENT_HOME": str(tmp_path), "OPENAI_API_KEY": "x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]  # not at first paint, then in the background with the SDK


def test_help_and_version_are_answered_without_loading_the_program():
    """The launcher (agent_cli/__main__.py) answers them from the parser alone: no config, no front end."""
    for word, answer in (("--version", "agent-cli "), ("--help", "usage: agent ")):
        done = run_python(f"""
            import atexit, sys
            atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('agent_cli')), file=sys.stderr))
            from agent_cli.__main__ import main
            main(['{word}'])
        """)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(answer)
        assert (
            done.stderr.strip() == "['agent_cli', 'agent_cli.__main__', 'agent_cli.arguments', 'agent_cli.paths', "
            "'agent_cli.socket_peer', 'agent_cli.startup_gc', 'agent_cli.warm', 'agent_cli.warm.client', "
            "'agent_cli.warm.protocol']"
        )


# --- the layers, checked on the source: front ends -> commands -> session -> models/tools/context


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in (REPO / "agent_cli").rglob("*.py")}


@dataclass(frozen=True)
class Import:
    """One import of an agent_cli module, where it is written."""

    importer: str
    module: str
    line: int
    local: bool  # inside a function: runs when the function is first called
    typing: bool  # under ``if TYPE_CHECKING``: only for hints


def package_of(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def project_imports(name: str) -> list[Import]:
    """Every import of an agent_cli module in ``name``'s file: at module level, in classes, inside
    functions and under ``if TYPE_CHECKING``."""
    package = package_of(name)
    found: list[Import] = []

    def targets(node: ast.Import | ast.ImportFrom) -> set[str]:
        if isinstance(node, ast.Import):
            return {alias.name for alias in node.names}
        base = node.module or ""
        if node.level:  # relative: from the package, one level up per extra dot
            parent = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parent, base] if base else parent)
        submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
        return submodules or {base}  # `from pkg import submodule` imports the submodule

    def visit(nodes, local: bool, typing: bool) -> None:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend(
                    Import(name, module, node.lineno, local, typing)
                    for module in sorted(targets(node))
                    if module in MODULES and module != name
                )
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.body, local, True)
                visit(node.orelse, local, typing)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(ast.iter_child_nodes(node), True, typing)
            elif isinstance(node, ast.AST):
                visit(ast.iter_child_nodes(node), local, typing)

    visit(ast.parse(MODULES[name].read_text(encoding="utf-8")).body, False, False)
    return found


def imported_modules(name: str, *, top_level: bool = False, typing: bool = True) -> set[str]:
    """agent_cli modules ``name`` imports: anywhere, or only at module level (``top_level``),
    with or without those under ``if TYPE_CHECKING``."""
    return {
        found.module
        for found in project_imports(name)
        if not (top_level and found.local) and (typing or not found.typing)
    }


def test_the_session_core_never_imports_commands_or_front_ends():
    """Nor what sits above it: runtime.py assembles sessions from agents/, mcp/ and plugins/."""
    above = (
        "agent_cli.commands",
        "agent_cli.tui",
        "agent_cli.headless",
        "agent_cli.acp",
        "agent_cli.cli",
        "agent_cli.runtime",
        "agent_cli.agents",
        "agent_cli.mcp",
        "agent_cli.plugins",
    )
    offenders = {
        name: sorted(m for m in imported_modules(name) if m.startswith(above))
        for name in MODULES
        if name.startswith("agent_cli.session")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


# The `agent` command's launcher answers --help and --version and pauses the garbage collector for
# `agent exec` before the program loads: it imports cli.py (every front end) inside its function,
# or, for `agent batch` (which only starts `agent exec` processes), batch/main.py alone. Nothing
# imports the launcher, so those imports cannot hide a cycle; they are the ones allowed.
ENTRY_POINT = "agent_cli.__main__"
ENTRY_POINT_IMPORTS = {(ENTRY_POINT, "agent_cli.cli"), (ENTRY_POINT, "agent_cli.batch.main")}


WARM_SERVER = "agent_cli.warm.server"  # `python -m agent_cli.warm.server`: the program, imported once for many runs


def test_nothing_imports_cli_but_the_entry_point():
    importers = [name for name in MODULES if "agent_cli.cli" in imported_modules(name)]
    assert importers == [ENTRY_POINT, WARM_SERVER]
    assert [name for name in MODULES if WARM_SERVER in imported_modules(name)] == []
    assert [name for name in MODULES if ENTRY_POINT in imported_modules(name)] == []
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"agent": f"{ENTRY_POINT}:main"}


# --- the import graph: every import counts, wherever it is written

# Third-party packages slow or optional enough that the agent_cli modules built on them (the Textual
# app, the ACP server...) are imported inside the function that needs them. Nothing else is.
HEAVY = ("textual", "rich", "acp", "mcp", "openai", "anthropic", "PIL", "markitdown", "tiktoken", "websockets")


def heavy_packages(name: str) -> set[str]:
    """The HEAVY packages ``name`` imports at module level."""
    found = set()
    for node in ast.parse(MODULES[name].read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
    return found & set(HEAVY)


def module_graph() -> dict[str, set[str]]:
    return {name: {found.module for found in project_imports(name)} for name in MODULES}


def top_package(name: str) -> str:
    return ".".join(name.split(".")[:2])  # agent_cli.session.turn -> agent_cli.session


def cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Per group of nodes that reach each other (Tarjan's strongly connected components): the group
    and one cycle through it (``a -> b -> ... -> a``, the shortest way round from its first node)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def connect(node: str) -> None:  # recursive: the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    found = []
    for group in groups:  # breadth first inside the group: the shortest path back to its start
        start, paths = group[0], {group[0]: [group[0]]}
        todo = [group[0]]
        while todo:
            node = todo.pop(0)
            nxt = sorted(m for m in graph[node] if m in group)
            if start in nxt:
                found.append(([*paths[node], start], group))
                break
            for other in nxt:
                if other not in paths:
                    paths[other] = [*paths[node], other]
                    todo.append(other)
    return found


def test_no_function_local_imports_of_the_project():
    """agent_cli modules are imported at the top, where the dependency shows; inside a function only
    a module that loads a heavy or optional package (HEAVY) the importer does not load already, and
    cli.py and batch/main.py in the entry point (ENTRY_POINT_IMPORTS)."""
    offenders = [
        f"{MODULES[found.importer].relative_to(REPO)}:{found.line} imports {found.module}"
        for name in sorted(MODULES)
        for found in project_imports(name)
        if found.local
        and not heavy_packages(found.module) - heavy_packages(name)
        and (found.importer, found.module) not in ENTRY_POINT_IMPORTS
    ]
    assert not offenders, f"{len(offenders)} function-local imports of agent_cli modules:\n" + "\n".join(offenders)


def test_no_import_cycles_between_modules():
    """Counted on every import, function-local and TYPE_CHECKING ones included."""
    found = cycles(module_graph())
    assert not found, "import cycles between modules:\n" + "\n".join(map(describe, found))


def describe(found: tuple[list[str], list[str]]) -> str:
    cycle, group = found
    text = " -> ".join(cycle)
    return (
        text
        if len(group) == len(cycle) - 1
        else f"{text}\n    (one cycle of {len(group)} that reach each other: {', '.join(group)})"
    )


def test_no_import_cycles_between_packages():
    """agent_cli.X as one node: config, session, tools... each sits above or below another, never both."""
    graph: dict[str, set[str]] = {}
    why: dict[tuple[str, str], str] = {}  # one module import behind each package edge
    for name, imported in module_graph().items():
        graph.setdefault(top_package(name), set())
        for module in sorted(imported):
            if top_package(module) != top_package(name):
                graph[top_package(name)].add(top_package(module))
                why.setdefault((top_package(name), top_package(module)), f"{name} imports {module}")
    found = cycles(graph)
    assert not found, "import cycles between packages:\n" + "\n".join(
        describe((cycle, group)) + "\n    " + "\n    ".join(why[pair] for pair in zip(cycle, cycle[1:]))
        for cycle, group in found
    )


def test_the_cycle_finder_names_a_cycle_and_passes_a_tree():
    assert cycles({"a": {"b"}, "b": {"c", "a"}, "c": {"a", "d"}, "d": set()}) == [(["a", "b", "a"], ["a", "b", "c"])]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_headless_subcommands_never_import_the_tui():
    """`agent resume` reopens the TUI from cli.py; the subcommands beside exec stay screenless."""
    offenders = {
        name: sorted(m for m in imported_modules(name) if m.startswith("agent_cli.tui"))
        for name in MODULES
        if name.startswith("agent_cli.headless")
    }
    assert {name: found for name, found in offenders.items() if found} == {}
