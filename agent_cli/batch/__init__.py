"""`agent batch`: many tasks, each one `agent exec` run in a worktree of its own.

tasks.py and task_folder.py read the tasks (a JSONL file, or folders in Terminal-Bench / Harbor's
format); runner.py runs one task on the machine it is on (repository, worktree, `agent exec --json`
as a subprocess, patch, verifier), the same code on this machine and on a Ray node; local_pool.py
runs them with a pool of threads here, ray_pool.py as Ray tasks on a cluster; results.py keeps
DIR/results.jsonl (one line per finished task, appended whole); progress.py and report.py show them;
main.py is the command line. Nothing here imports the session core: a batch shares no state with
the sessions it starts.
"""
