"""Trusting a repository before its own code runs.

``inventory`` lists what a folder would run (its ``.mcp.json`` servers, the hooks and servers of
its ``.agent/config.toml``, the hooks of ``.claude/settings.json``, its ``.agent/plugins/``, and
its allow rules) with a hash of that content; ``store`` remembers the user's answer per folder and
hash; ``gate`` gives a session the configuration it may use.
"""
