"""`agent acp`: the agent as an Agent Client Protocol server on stdin/stdout, a third front end
over the same session core as the TUI and `agent exec` (editors: Zed, JetBrains, Neovim, Emacs)."""
