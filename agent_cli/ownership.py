"""Which folders are the user's own: the only places a repository's configuration is read from.

A repository's `.agent/config.toml`, `.claude/` settings, `.mcp.json`, plugins, agent, command
and skill files, and the `.git` that makes a folder a repository, are read only from folders that
no other user can write: a folder qualifies when it belongs to the user (or to root) and is
neither world-writable nor group-writable for a group others are in. Looking upwards from the
working folder stops at the first folder that does not qualify (`/tmp`, a shared 0777 folder,
another user's home), where the owner changes (a folder of the user's inside one of root's), and
at the user's home: another user's `/tmp/.agent/config.toml` or `/tmp/.git` never applies to a
session started in `/tmp/x`. Git refuses such repositories too ("dubious ownership").
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import stat
from collections.abc import Iterator
from pathlib import Path


def others_can_write(path: Path) -> str | None:
    """Why another user could change ``path`` (None: only its owner, the user or root, can)."""
    try:
        info = os.stat(path)
    except OSError:
        return "cannot be inspected"
    if info.st_uid not in (os.geteuid(), 0):
        return f"belongs to another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    if info.st_mode & stat.S_IWGRP and not _private_group(info.st_gid, info.st_uid):
        return f"is writable by the group {_group_name(info.st_gid)}"
    return None


def own_folders(start: Path) -> Iterator[Path]:
    """``start`` and the folders above it, while they are the user's own (see the module's text)."""
    start = Path(start).resolve()
    home = _home()
    try:
        owner = os.stat(start).st_uid
    except OSError:
        return
    for folder in (start, *start.parents):
        if others_can_write(folder) is not None:
            return
        try:
            if os.stat(folder).st_uid != owner:
                return  # the owner boundary: a folder of the user's inside one of root's
        except OSError:
            return
        yield folder
        if folder == home:
            return


def is_own_folder(folder: Path) -> bool:
    return next(own_folders(folder), None) is not None


def own_file(path: Path) -> bool:
    """Whether a configuration file and the folder holding it are the user's own (its target too,
    for a symbolic link)."""
    real = Path(os.path.realpath(path))
    return others_can_write(real) is None and others_can_write(real.parent) is None


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


@functools.cache
def _private_group(gid: int, owner: int) -> bool:
    """A user's private group (Debian's umask 002 makes folders group-writable): the owner's own
    primary group, with no other member."""
    try:
        user = pwd.getpwuid(owner)
    except KeyError:
        return False
    if user.pw_gid != gid:
        return False
    try:
        members = grp.getgrgid(gid).gr_mem
    except KeyError:
        return True
    return all(member == user.pw_name for member in members)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)
