"""Markdown prompt templates with includes, placeholders and user overrides.

Syntax, kept deliberately tiny so prompts can contain code and JSON untouched:

- ``{% include 'part.md' %}`` inserts another template (path relative to the prompts folder).
- ``{name}`` (an identifier in single braces) is a variable. Every variable must be supplied and
  every supplied variable must be used, so a renamed placeholder fails loudly instead of
  silently sending the model a literal ``{name}``.
- ``{{name}}`` renders as a literal ``{name}``. Any other brace (``{"a": 1}``, ``${HOME}``) is
  left alone.

A template in an earlier folder wins over one with the same name in a later folder; the default
library searches ``$AGENT_HOME/prompts`` before the bundled prompts, for includes too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path, PurePosixPath

from agent_cli.paths import agent_home, bundled_prompts_dir

_INCLUDE = re.compile(r"""\{%\s*include\s+(['"])(?P<name>[^'"]+)\1\s*%\}""")
# `{{name}}` is an escape; `{name}` not preceded by `$` (shell `${VAR}`) is a placeholder.
_PLACEHOLDER = re.compile(r"\{\{(?P<literal>[A-Za-z_]\w*)\}\}|(?<!\$)\{(?P<var>[A-Za-z_]\w*)\}")


class PromptError(Exception):
    """A template is missing, includes itself, or was rendered with the wrong variables."""


class PromptLibrary:
    """Templates looked up in ``dirs`` in order; file reads are cached for the library's life."""

    def __init__(self, dirs: Iterable[Path]):
        self.dirs = tuple(Path(d) for d in dirs)
        self._cache: dict[str, tuple[Path, str]] = {}

    def find(self, name: str) -> Path:
        """The file that provides template ``name`` (the first folder that has it)."""
        return self._read(name)[0]

    def source(self, name: str) -> str:
        """The raw text of template ``name``, includes not expanded."""
        return self._read(name)[1]

    def expand(self, name: str) -> str:
        """Template ``name`` with every include expanded."""
        return self._expand(name, ())

    def placeholders(self, name: str) -> list[str]:
        """The variable names template ``name`` needs, in order of first use."""
        found = [m["var"] for m in _PLACEHOLDER.finditer(self.expand(name)) if m["var"]]
        return list(dict.fromkeys(found))

    def render(self, name: str, /, **variables: object) -> str:
        text = self.expand(name)
        needed = self.placeholders(name)
        missing = [var for var in needed if var not in variables]
        if missing:
            raise PromptError(f"prompt {name!r} needs variable(s) {', '.join(missing)} ({self.find(name)})")
        unused = [var for var in variables if var not in needed]
        if unused:
            raise PromptError(
                f"prompt {name!r} does not use variable(s) {', '.join(unused)} ({self.find(name)}); "
                f"its placeholders are: {', '.join(needed) or 'none'}"
            )

        def substitute(match: re.Match[str]) -> str:
            if match["literal"]:
                return "{" + match["literal"] + "}"
            return str(variables[match["var"]])

        return _PLACEHOLDER.sub(substitute, text)

    def _read(self, name: str) -> tuple[Path, str]:
        cached = self._cache.get(name)
        if cached is not None:
            return cached
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise PromptError(f"prompt name {name!r} must be a relative path inside the prompts folder")
        for directory in self.dirs:
            path = directory / relative
            if path.is_file():
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise PromptError(f"cannot read prompt {name!r} from {path}: {exc}") from None
                self._cache[name] = (path, text)
                return path, text
        searched = ", ".join(str(d) for d in self.dirs) or "no folders"
        raise PromptError(f"prompt {name!r} not found (searched {searched})")

    def _expand(self, name: str, chain: tuple[str, ...]) -> str:
        if name in chain:
            raise PromptError("prompt include cycle: " + " -> ".join((*chain, name)))
        text = self._read(name)[1]
        return _INCLUDE.sub(lambda m: self._expand(m["name"], (*chain, name)).rstrip("\n"), text)


def default_prompt_dirs(home: Path | None = None) -> tuple[Path, ...]:
    return ((home or agent_home()) / "prompts", bundled_prompts_dir())


@lru_cache(maxsize=8)
def _library(dirs: tuple[Path, ...]) -> PromptLibrary:
    return PromptLibrary(dirs)


def prompt_library(home: Path | None = None) -> PromptLibrary:
    """The shared library for ``home`` (default ``$AGENT_HOME``): user overrides, then bundled."""
    return _library(default_prompt_dirs(home))


def render_prompt(name: str, /, **variables: object) -> str:
    """Render ``name`` from the default library (``$AGENT_HOME/prompts`` over the bundled ones)."""
    return prompt_library().render(name, **variables)
