"""A session's start walks the agent's home for its disk budget only when no process did lately
(a script running `agent exec` in a loop does not pay for the walk each time)."""

from __future__ import annotations

import os
import time

from agent_cli import home_budget
from tests.integration.test_home_budget_exec import MB, old_file


def started(home) -> None:
    home_budget.start(home, 100, None)
    home_budget._finish()  # what the process does at exit: the check under way finishes


def test_a_start_checks_only_when_no_check_ran_lately(tmp_path):
    stamp = tmp_path / home_budget.STAMP
    stamp.touch()
    over = old_file(tmp_path / "tool-outputs" / "old.log", 150 * MB, 2)
    started(tmp_path)
    assert over.exists()  # checked a moment ago: the home was not walked

    long_ago = time.time() - home_budget.START_CHECK_EVERY_S - 60
    os.utime(stamp, (long_ago, long_ago))
    started(tmp_path)
    assert not over.exists()
    assert time.time() - stamp.stat().st_mtime < 60  # this check is the latest now


def test_the_first_start_checks(tmp_path):
    over = old_file(tmp_path / "tool-outputs" / "old.log", 150 * MB, 2)
    started(tmp_path)
    assert not over.exists() and (tmp_path / home_budget.STAMP).exists()
