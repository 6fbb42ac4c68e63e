"""Claude Code plugins: loader and the Claude tool-name vocabulary for hooks (issue 12)."""
