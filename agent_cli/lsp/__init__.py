"""Language servers after edits: diagnostics for the model, and the ``lsp`` tool (docs/tools.md)."""
