"""`agent exec` and the core never load Textual; the app paints before the provider SDK loads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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


def test_the_first_screen_paints_before_the_sdk_is_imported(tmp_path):
    done = run_python("""
        import asyncio, sys
        from pathlib import Path
        from agent_cli.config import load_config
        from agent_cli.tui.app import AgentApp

        seen = {}

        class Probe(AgentApp):
            def _start_background_work(self):
                seen['sdk_at_first_paint'] = 'openai' in sys.modules
                super()._start_background_work()

        async def main():
            config = load_config(Path.cwd(), ['model_provider="openai-chat"', 'model="test-model"'])
            app = Probe(config)
            async with app.run_test() as pilot:
                await app.workers.wait_for_complete()
                await pilot.pause()
            print(seen['sdk_at_first_paint'], 'openai' in sys.modules)

        asyncio.run(main())
    """, env={"AGENT_HOME": str(tmp_path), "OPENAI_API_KEY": "x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]  # not at first paint, then loaded in the background
