"""The sandbox runtime: what confines the commands the agent runs, and the launcher that applies it.

policy.py decides (the mechanism a machine offers, a policy's writable roots and protected paths,
the argv that runs a command under it); launcher.py runs in the child process, by path, with its
stdlib-only parts (landlock.py, seccomp.py, capabilities.py, mounts.py, supervisor.py: nothing
outlives it); protected.py (.git/.agent/.claude/.mcp.json) and guard.py (git hooks and config,
nested .git, dotfiles: git_config.py, repo_index.py, repo_sanitize.py), host_sockets.py and
report.py (/status). Allow-list network: network.py (the route to the agent's proxy, the proxy
variables), and the launcher's netns.py and bridge.py (the command's own network namespace, and
the thread that hands its connections over to the proxy, which lives in agent_cli/network/).
tools/ keeps the tools the model calls; they run their commands through here.
"""
