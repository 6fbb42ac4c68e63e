"""The launcher ends what a command leaves behind with a signal to its own process group, which it
leads when the agent starts it (``start_new_session``). Started without one (a probe run with
``subprocess.run``), that group is its caller's: the caller must not be signalled with it."""

from __future__ import annotations

import subprocess
import sys

from agent_cli.sandbox.policy import supervised_argv

CALLER = """
import subprocess, sys
argv = sys.argv[1:]
subprocess.run(argv)  # the launcher in this process's group, as a probe runs it
print("the caller survived")
"""


def test_a_launcher_not_leading_its_group_never_signals_its_callers():
    leftover = supervised_argv(["sh", "-c", "sleep 30 & exit 0"])  # something for the clean-up to end
    done = subprocess.run(
        [sys.executable, "-c", CALLER, *leftover], capture_output=True, text=True, timeout=60, start_new_session=True
    )
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "the caller survived" in done.stdout
