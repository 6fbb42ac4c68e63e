"""`agent exec` and the core never load Textual; the app paints before the HTTP library loads."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60, env=full_env, cwd=REPO, check=False)


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
    done = run_python("""
        import asyncio, sys
        from pathlib import Path
        from agent_cli.config import load_config
        from agent_cli.tui.app import AgentApp

        seen = {}

        class Probe(AgentApp):
            def _start_background_work(self):
                seen['http_at_first_paint'] = 'httpx2' in sys.modules
                super()._start_background_work()

        async def main():
            config = load_config(Path.cwd(), ['model_provider="openai-chat"', 'model="test-model"'])
            app = Probe(config)
            async with app.run_test() as pilot:
                await app.workers.wait_for_complete()
                await pilot.pause()
            print(seen['http_at_first_paint'], 'httpx2' in sys.modules, 'openai' in sys.modules)

        asyncio.run(main())
    """, env={"AGENT_HOME": str(tmp_path), "OPENAI_API_KEY": "x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]  # not at first paint, then in the background with the SDK


# --- the layers, checked on the source: front ends -> commands -> session -> models/tools/context


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in (REPO / "agent_cli").rglob("*.py")}


def imported_modules(name: str, *, top_level: bool = False, typing: bool = True) -> set[str]:
    """agent_cli modules ``name`` imports: anywhere, or only at module level (``top_level``),
    with or without those under ``if TYPE_CHECKING``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, one level up per extra dot
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
                found.update(submodules or {base})  # `from pkg import submodule` imports the submodule
            elif not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            elif top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            elif isinstance(node, ast.AST):
                visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {module for module in found if module in MODULES and module != name}


def test_the_session_core_never_imports_commands_or_front_ends():
    """Nor what sits above it: runtime.py assembles sessions from agents/, mcp/ and plugins/."""
    above = ("agent_cli.commands", "agent_cli.tui", "agent_cli.headless", "agent_cli.acp", "agent_cli.cli",
             "agent_cli.runtime", "agent_cli.agents", "agent_cli.mcp", "agent_cli.plugins")
    offenders = {
        name: sorted(m for m in imported_modules(name) if m.startswith(above))
        for name in MODULES if name.startswith("agent_cli.session")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_nothing_imports_cli_but_the_entry_point():
    importers = [name for name in MODULES if "agent_cli.cli" in imported_modules(name)]
    assert importers == ["agent_cli.__main__"]


def test_no_import_cycles():
    """Also through imports made only for type hints below session/ and commands/ (tools/base.py,
    sandbox.py and common.py once imported each other that way); session/ and commands/ may name
    their own classes (Session, CommandTable) in hints."""
    def edges(name: str) -> set[str]:
        typing = not name.startswith(("agent_cli.session", "agent_cli.commands"))
        return imported_modules(name, top_level=True, typing=typing)

    graph = {name: edges(name) for name in MODULES}
    cycles = []
    for start in graph:  # a cycle exists when a module can reach itself
        seen, todo = set(), list(graph[start])
        while todo:
            module = todo.pop()
            if module == start:
                cycles.append(start)
                break
            if module not in seen:
                seen.add(module)
                todo.extend(graph[module])
    assert cycles == []
