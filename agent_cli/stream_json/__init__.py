"""The `claude` stream-json protocol: `agent --input-format stream-json --output-format stream-json`
and `agent -p`, so the Claude Agent SDK (and scripts written for `claude -p`) drive agent-cli."""
