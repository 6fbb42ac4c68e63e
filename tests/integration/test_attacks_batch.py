"""`agent batch` attacked by what it runs: a hostile model in one task against another task's
verifier. Real batches on real git repositories, the fake model server answering by prompt."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.batch_helpers import batch_server, results, run_batch
from tests.worktree_helpers import committed_repo

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def server():
    with batch_server() as fake:
        yield fake


@pytest.fixture
def home():
    """An $AGENT_HOME outside the temp folders, as ~/.agent is (every sandbox may write /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="agent-home-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def task(folder: Path, prompt: str, test_sh: str | None = None, **files: str) -> None:
    folder.mkdir(parents=True)
    (folder / "instruction.md").write_text(prompt)
    if test_sh is not None:
        (folder / "tests").mkdir()
        (folder / "tests" / "test.sh").write_text(test_sh)
        for name, text in files.items():
            (folder / "tests" / name).write_text(text)


def test_one_tasks_model_cannot_rewrite_another_tasks_tests(server, tmp_path, home):
    """The tests of a task were written to /tmp, which every task's sandbox may write: with two
    workers, the model of one task rewrote the other's check and its reward became 1."""
    repo = committed_repo(tmp_path / "repo")
    meet = tmp_path / "meet"
    meet.mkdir()
    tasks = tmp_path / "tasks"
    tamper = (
        f"for i in $(seq 600); do [ -f {meet}/where ] && break; sleep 0.1; done; "
        f'echo "exit 0" > "$(dirname "$(cat {meet}/where)")/check.sh" && echo TAMPERED; touch {meet}/done'
    )
    task(tasks / "a-attacker", f"run: {tamper}")
    verifier = (
        f'echo "$0" > {meet}/where\n'
        f"for i in $(seq 600); do [ -f {meet}/done ] && break; sleep 0.1; done\n"
        '. "$(dirname "$0")/check.sh"\n'
    )
    task(tasks / "b-victim", "run: true", verifier, **{"check.sh": "echo the check fails; exit 1\n"})
    done = run_batch(server, tasks, tmp_path / "out", "--workers", "2", cwd=repo, env={"AGENT_HOME": str(home)})
    found = results(tmp_path / "out")
    assert found["b-victim"]["reward"] == 0.0, done.stderr
    assert "the check fails" in (tmp_path / "out" / "tasks" / "b-victim" / "verifier.log").read_text()
