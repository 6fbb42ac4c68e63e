"""Reading git config files the way git does, for the sandbox: where git looks for hooks
(``core.hooksPath``), which files it includes, and which keys make it run a program.

Only what the sandbox needs: entries as (section, subsection, key, value), includes followed
(every ``include.path`` and ``includeIf.*.path``, whatever the condition: protecting a file git
might read costs nothing). A line git would accept but this reader does not understand counts as
unsafe (see :func:`parse`), so a sanitized config never keeps what was not understood.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_INCLUDE_DEPTH = 10  # git's own limit

# Keys that may stay in the config of a repository made during the session: none of them makes
# git run a program. Everything else is removed (fail closed): fsmonitor, pager, editor,
# sshCommand, hooksPath, aliases, filters, diff/merge drivers, includes, credential helpers...
SAFE_KEYS = {
    ("core", "repositoryformatversion"),
    ("core", "filemode"),
    ("core", "bare"),
    ("core", "logallrefupdates"),
    ("core", "ignorecase"),
    ("core", "precomposeunicode"),
    ("core", "symlinks"),
    ("core", "autocrlf"),
    ("core", "eol"),
    ("core", "safecrlf"),
    ("core", "quotepath"),
    ("core", "sharedrepository"),
    ("init", "defaultbranch"),
    ("pull", "rebase"),
    ("pull", "ff"),
    ("push", "default"),
    ("push", "autosetupremote"),
    ("fetch", "prune"),
    ("user", "name"),
    ("user", "email"),
    ("gc", "auto"),
    ("lfs", "repositoryformatversion"),  # git lfs clone writes it
}
SAFE_SUBSECTION_KEYS = {
    "remote": {"url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror"},
    "branch": {"remote", "merge", "rebase", "pushremote", "description"},
    "submodule": {"url", "active", "branch", "shallow"},
    "extensions": set(),
}
SAFE_SECTIONS = {"extensions"}  # every key (objectFormat, worktreeConfig...): formats, not programs


@dataclass(frozen=True, slots=True)
class Entry:
    section: str  # lower case
    subsection: str | None  # case kept
    key: str  # lower case
    value: str | None  # None: a bare key (boolean true)
    origin: Path

    @property
    def name(self) -> str:
        middle = f".{self.subsection}" if self.subsection is not None else ""
        return f"{self.section}{middle}.{self.key}"

    def safe(self) -> bool:
        if self.section in SAFE_SECTIONS:
            return True
        if self.subsection is None:
            return (self.section, self.key) in SAFE_KEYS
        return self.key in SAFE_SUBSECTION_KEYS.get(self.section, set())


class Unparsed(ValueError):
    """A line this reader does not understand (git might): the caller treats the file as unsafe."""


def parse(text: str, origin: Path) -> list[Entry]:
    """The entries of one config file, includes not followed. Raises :class:`Unparsed`."""
    entries: list[Entry] = []
    section: str | None = None
    subsection: str | None = None
    lines = iter(text.splitlines())
    for raw in lines:
        line = raw.strip()
        while line.startswith("["):
            section, subsection, line = _header(line)
        if not line or line[0] in "#;":
            continue
        if section is None:
            raise Unparsed(f"a key outside any section: {raw!r}")
        key, sep, rest = line.partition("=")
        key = key.strip().lower()
        if not key or not (key[0].isalpha() and all(c.isalnum() or c == "-" for c in key)):
            raise Unparsed(f"not a key: {raw!r}")
        value: str | None = None
        if sep:
            while _continues(rest):
                rest = rest[:-1] + next(lines, "")
            value = _value(rest)
        entries.append(Entry(section, subsection, key, value, origin))
    return entries


def _header(line: str) -> tuple[str, str | None, str]:
    end = _header_end(line)
    inside, rest = line[1:end], line[end + 1 :].strip()
    name, _, sub = inside.partition(" ")
    sub = sub.strip()
    if sub:
        if len(sub) < 2 or sub[0] != '"' or sub[-1] != '"':
            raise Unparsed(f"a section header git would read otherwise: {line!r}")
        text = sub[1:-1]
        out, escape = [], False
        for char in text:
            if escape:
                out.append(char)
                escape = False
            elif char == "\\":
                escape = True
            else:
                out.append(char)
        return name.lower(), "".join(out), rest
    if "." in name:  # the old [section.subsection] form
        head, _, tail = name.partition(".")
        return head.lower(), tail.lower(), rest
    return name.lower(), None, rest


def _header_end(line: str) -> int:
    quoted = escape = False
    for index, char in enumerate(line):
        if escape:
            escape = False
        elif char == "\\":
            escape = True
        elif char == '"':
            quoted = not quoted
        elif char == "]" and not quoted:
            return index
    raise Unparsed(f"an unterminated section header: {line!r}")


def _continues(rest: str) -> bool:
    trailing = len(rest) - len(rest.rstrip("\\"))
    return trailing % 2 == 1


def _value(rest: str) -> str:
    out: list[str] = []
    quoted = escape = False
    pending_space = ""
    for char in rest.strip():
        if escape:
            out.append(pending_space + {"n": "\n", "t": "\t", "b": "\b"}.get(char, char))
            pending_space, escape = "", False
        elif char == "\\":
            escape = True
        elif char == '"':
            out.append(pending_space)
            pending_space, quoted = "", not quoted
        elif char in "#;" and not quoted:
            break
        elif char.isspace() and not quoted:
            pending_space += char
        else:
            out.append(pending_space + char)
            pending_space = ""
    return "".join(out)


def read_entries(path: Path, depth: int = 0) -> Iterator[Entry]:
    """Entries of ``path`` and of every file it includes (unreadable or unparsed files yield an
    ``include`` entry for themselves only, so callers still protect them)."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        entries = parse(text, path)
    except (OSError, Unparsed):
        return
    for entry in entries:
        yield entry
        if depth < MAX_INCLUDE_DEPTH and entry.key == "path" and entry.section in ("include", "includeif"):
            if target := include_target(entry):
                yield from read_entries(target, depth + 1)


def include_target(entry: Entry) -> Path | None:
    if not entry.value:
        return None
    value = os.path.expanduser(entry.value)
    path = Path(value) if os.path.isabs(value) else entry.origin.parent / value
    return Path(os.path.abspath(path))


def user_config_files() -> list[Path]:
    """The global and system config files git reads for every repository (which exist or not)."""
    files: list[Path] = []
    if global_file := os.environ.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(global_file).expanduser())
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        files += [Path(xdg) / "git" / "config", Path.home() / ".gitconfig"]
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    return files


def git_dirs(dot_git: Path) -> list[Path]:
    """The git directory a ``.git`` entry stands for, and its common directory (worktrees,
    submodules): a ``.git`` file says ``gitdir: <path>``, a ``commondir`` file names the other."""
    gitdir = dot_git
    if dot_git.is_file():
        try:
            first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        except (OSError, IndexError):
            return []
        if not first.startswith("gitdir:"):
            return []
        gitdir = Path(os.path.abspath(dot_git.parent / first.partition(":")[2].strip()))
    found = [gitdir]
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return found
    if common:
        found.append(Path(os.path.abspath(gitdir / common)))
    return found


def repository_files(dot_git: Path) -> list[Path]:
    """The config files of the repository at ``dot_git`` (its git dirs' config and config.worktree)."""
    return [folder / name for folder in git_dirs(dot_git) for name in ("config", "config.worktree")]


def hooks_and_includes(work_tree: Path, config_files: list[Path]) -> list[Path]:
    """What git would run or read for the repository whose work tree is ``work_tree``: every
    ``core.hooksPath`` folder named in ``config_files`` (relative ones from the work tree) and
    every file those include."""
    found: list[Path] = []
    for config in config_files:
        for entry in read_entries(config):
            if entry.section == "core" and entry.key == "hookspath" and entry.value:
                value = os.path.expanduser(entry.value)
                found.append(Path(os.path.abspath(work_tree / value)))
            elif (
                entry.key == "path" and entry.section in ("include", "includeif") and (target := include_target(entry))
            ):
                found.append(target)
    return found
