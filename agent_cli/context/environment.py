"""``<environment_context>``: where the agent runs and under which rules.

Sent in full at session start. Later turns append a fragment with only the fields that changed
(:func:`diff`), never an edit to an earlier item, so the request prefix stays byte-stable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from html import escape
from pathlib import Path

from agent_cli.context.fragments import ENVIRONMENT_CONTEXT

FIELD_ORDER = (
    "cwd",
    "shell",
    "current_date",
    "timezone",
    "approval_policy",
    "sandbox_mode",
    "network_access",
    "writable_roots",
)


@dataclass(frozen=True, slots=True)
class EnvironmentContext:
    cwd: str
    shell: str
    current_date: str  # ISO date, e.g. 2025-01-31
    timezone: str  # IANA name when known (Europe/Paris), else a UTC offset (UTC+01:00)
    approval_policy: str
    sandbox_mode: str
    network_access: bool
    writable_roots: tuple[str, ...] = ()

    @classmethod
    def detect(
        cls,
        cwd: str | Path,
        approval_policy: str,
        sandbox_mode: str,
        network_access: bool,
        writable_roots: Iterable[str | Path] = (),
        *,
        now: datetime | None = None,
    ) -> EnvironmentContext:
        now = (now or datetime.now()).astimezone()
        return cls(
            cwd=str(cwd),
            shell=detect_shell(),
            current_date=now.date().isoformat(),
            timezone=detect_timezone(now),
            approval_policy=approval_policy,
            sandbox_mode=sandbox_mode,
            network_access=bool(network_access),
            writable_roots=tuple(str(root) for root in writable_roots),
        )

    def to_xml(self) -> str:
        """The full ``<environment_context>`` fragment."""
        return _render(self, [name for name in FIELD_ORDER if name != "writable_roots" or self.writable_roots])


def diff(previous: EnvironmentContext | None, current: EnvironmentContext) -> str | None:
    """A fragment with only the fields that changed; the full one without ``previous``."""
    if previous is None:
        return current.to_xml()
    changed = [name for name in FIELD_ORDER if getattr(previous, name) != getattr(current, name)]
    return _render(current, changed) if changed else None


def _render(env: EnvironmentContext, names: Iterable[str]) -> str:
    lines: list[str] = []
    for name in names:
        value = getattr(env, name)
        if name == "writable_roots":
            if value:
                lines.append("  <writable_roots>")
                lines.extend(f"    <root>{escape(root, quote=False)}</root>" for root in value)
                lines.append("  </writable_roots>")
            else:
                lines.append("  <writable_roots></writable_roots>")  # said explicitly when it became empty
        elif name == "network_access":
            lines.append(f"  <network_access>{'enabled' if value else 'restricted'}</network_access>")
        else:
            lines.append(f"  <{name}>{escape(str(value), quote=False)}</{name}>")
    return ENVIRONMENT_CONTEXT.wrap("\n".join(lines))


def detect_shell() -> str:
    shell = os.environ.get("SHELL") or ("cmd" if os.name == "nt" else "sh")
    return Path(shell).name


def detect_timezone(now: datetime | None = None) -> str:
    """The IANA zone name from $TZ, /etc/timezone or /etc/localtime; else the UTC offset."""
    name = _iana_from_tz_env() or _iana_from_etc()
    if name:
        return name
    offset = (now or datetime.now()).astimezone().utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{mins:02d}"


def _looks_like_iana(name: str) -> bool:
    return name == "UTC" or ("/" in name and not name.startswith("/") and " " not in name)


def _iana_from_tz_env() -> str | None:
    value = os.environ.get("TZ", "").strip().lstrip(":")
    if "zoneinfo/" in value:  # TZ=/usr/share/zoneinfo/Europe/Paris
        value = value.split("zoneinfo/", 1)[1]
    return value if value and _looks_like_iana(value) else None


def _iana_from_etc() -> str | None:
    try:
        value = Path("/etc/timezone").read_text(encoding="utf-8").strip()
        if value and _looks_like_iana(value):
            return value
    except (OSError, UnicodeDecodeError):
        pass
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return None
    if "zoneinfo/" in target:
        value = target.split("zoneinfo/", 1)[1]
        return value if _looks_like_iana(value) else None
    return None
