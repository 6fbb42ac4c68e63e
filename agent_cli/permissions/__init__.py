"""Permission rules: Claude Code's ``permissions: {allow, ask, deny}`` and our ``[permissions]``.

``rules`` reads one rule and matches it, ``shell_parse`` turns a shell line into simple commands,
``targets`` says what a tool call does, ``sources`` finds the rule files, ``engine`` decides, and
``writer`` saves a rule the user chose in the approval modal.
"""
