"""Which language server speaks for a file: the known ones found on PATH, and ``[lsp.NAME]`` tables.

Per language, the servers the config names run; otherwise the first known one on PATH. A table
overrides a known server of its name field by field (``command``, ``languages``, ``root_markers``,
``init_options``, ``settings``) or adds a new one; ``disabled = true`` leaves one out, and
``lsp = false`` turns them all off.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# file extension -> LSP language id
LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
}
TS_LANGUAGES = ("typescript", "typescriptreact", "javascript", "javascriptreact")
TABLE_KEYS = {
    "command": list,
    "languages": list,
    "root_markers": list,
    "init_options": dict,
    "settings": dict,
    "disabled": bool,
}


@dataclass(frozen=True)
class LspSpec:
    name: str
    command: tuple[str, ...]
    languages: tuple[str, ...]
    root_markers: tuple[str, ...] = (".git",)
    init_options: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # answers workspace/configuration
    configured: bool = False  # named by an [lsp.NAME] table

    def setting(self, section: str | None) -> Any:
        """The value at a dotted ``section`` of ``settings`` (None: the whole table)."""
        value: Any = self.settings
        for part in (section or "").split(".") if section else ():
            value = value.get(part) if isinstance(value, dict) else None
        return value


PY_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", "requirements.txt", ".git")
# In order of preference within a language: the first found on PATH runs unless the config names one.
KNOWN: tuple[LspSpec, ...] = (
    LspSpec(
        "basedpyright",
        ("basedpyright-langserver", "--stdio"),
        ("python",),
        PY_MARKERS,
        # "recommended" (its default) warns about every untyped name: new code would drown in it
        settings={"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}},
    ),
    LspSpec("pyright", ("pyright-langserver", "--stdio"), ("python",), PY_MARKERS),
    LspSpec("pylsp", ("pylsp",), ("python",), PY_MARKERS),
    LspSpec("ruff", ("ruff", "server"), ("python",), ("pyproject.toml", "ruff.toml", ".ruff.toml", ".git")),
    LspSpec(
        "typescript",
        ("typescript-language-server", "--stdio"),
        TS_LANGUAGES,
        ("tsconfig.json", "jsconfig.json", "package.json", ".git"),
    ),
    LspSpec("gopls", ("gopls",), ("go",), ("go.work", "go.mod", ".git")),
    LspSpec("rust-analyzer", ("rust-analyzer",), ("rust",), ("Cargo.toml", ".git")),
    LspSpec("clangd", ("clangd",), ("c", "cpp"), ("compile_commands.json", "compile_flags.txt", ".clangd", ".git")),
)


def language_of(path: Path) -> str | None:
    return LANGUAGES.get(path.suffix.lower())


def check_lsp_table(value: Any, origin: str) -> None:
    """``lsp``: false/true, or a table of ``[lsp.NAME]`` tables (config.py runs it on each file)."""
    if isinstance(value, bool):
        return
    for name, table in value.items():
        if not isinstance(table, dict):
            raise ValueError(f"`lsp.{name}` must be a table (command, languages, root_markers, init_options)")
        for key, item in table.items():
            expected = TABLE_KEYS.get(key)
            if expected is None:
                raise ValueError(f"`lsp.{name}.{key}` is not a language server setting; use {', '.join(TABLE_KEYS)}")
            if not isinstance(item, expected):
                raise ValueError(f"`lsp.{name}.{key}` must be {'an array' if expected is list else expected.__name__}")
            if expected is list and not all(isinstance(entry, str) for entry in item):
                raise ValueError(f"`lsp.{name}.{key}` must be an array of strings")


def configured_specs(value: Any) -> list[LspSpec]:
    """The known servers with ``[lsp.NAME]`` applied, the new ones after them, disabled ones left out
    (a new one needs ``command`` and ``languages``, which may come from different files)."""
    tables: Mapping[str, dict[str, Any]] = value if isinstance(value, dict) else {}
    specs = []
    for spec in KNOWN:
        table = tables.get(spec.name)
        if table is None:
            specs.append(spec)
        elif not table.get("disabled"):
            specs.append(_apply(spec, table))
    for name, table in tables.items():
        if not table.get("disabled") and not any(spec.name == name for spec in KNOWN):
            specs.append(_apply(LspSpec(name, (), ()), table))
    return specs


def _apply(spec: LspSpec, table: dict[str, Any]) -> LspSpec:
    return replace(
        spec,
        command=tuple(table.get("command", spec.command)),
        languages=tuple(table.get("languages", spec.languages)),
        root_markers=tuple(table.get("root_markers", spec.root_markers)),
        init_options=table.get("init_options", spec.init_options),
        settings=table.get("settings", spec.settings),
        configured=True,
    )


def servers_for(
    language: str, specs: list[LspSpec], which: Callable[[str], str | None] = shutil.which
) -> list[LspSpec]:
    """The servers that speak for ``language``: the configured ones, else the first known one found."""
    candidates = [spec for spec in specs if language in spec.languages and spec.command]
    configured = [spec for spec in candidates if spec.configured]
    chosen = configured or candidates
    found = [spec for spec in chosen if which(spec.command[0])]
    return found if configured else found[:1]


def find_root(path: Path, markers: tuple[str, ...], boundary: Path) -> Path:
    """The nearest folder from ``path`` up to ``boundary`` holding one of ``markers``; else ``boundary``."""
    for folder in path.parents:
        if not folder.is_relative_to(boundary):
            break
        if any((folder / marker).exists() for marker in markers):
            return folder
    return boundary
