"""Hooks as configured: the grammar of a hook table (spec.py) and our tool calls in the vocabulary of
Claude Code's hooks (vocabulary.py). config.toml, .claude/settings.json and plugins all declare
hooks this way, so this package sits below config.py, plugins/ and session/ (which runs them)."""
