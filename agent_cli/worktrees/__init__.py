"""Sessions in git worktrees: ``agent -w/--worktree [NAME]``, ``agent exec --worktree``, ``/worktree``,
``agent worktree list|rm|prune`` and agent files with ``isolation: worktree``.

A worktree is a second checkout of the user's repository on a branch of its own (``agent/NAME``),
kept under ``$AGENT_HOME/worktrees/<repository>-<hash>/NAME``: outside the user's working tree (their
``git status`` stays clean) and outside the sandbox's protected folders. ``store.py`` creates, finds,
lists and removes them (git only, nothing of the session); ``setup.py`` prepares a new one (ignored
files copied, a set-up command); ``entering.py`` is what a front end calls (:func:`enter_worktree`);
``leaving.py`` decides what happens to one when its session ends.
"""
