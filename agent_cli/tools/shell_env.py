"""The environment commands run with: the agent's own, minus anything that looks like a secret.

Configured by ``[shell_environment_policy]``::

    inherit = "all"            # or "none": start from a few basics (HOME, PATH, LANG, ...)
    exclude = ["AWS_*"]        # more globs to drop, on top of the secret patterns
    keep = ["GITHUB_TOKEN"]    # names or globs kept even though they look like secrets
    set = { CI = "1" }         # set last, whatever the rules above say

Globs match names case-insensitively. The model provider's key variable is always dropped
unless listed in ``keep``, and so is any variable whose value carries a credential in a URL
(``DATABASE_URL=postgres://user:pass@host/db``, ``FEED=https://host/x?token=…``), whatever its name.
Hooks and MCP servers get the same environment as commands.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SECRET_PATTERNS = ("*_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD*", "*_API_KEY*", "*SECRET_KEY*")
PROVIDER_KEY_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY")
# `scheme://user:password@` (or `scheme://:password@`) anywhere in a value.
URL_CREDENTIALS = re.compile(r"\b[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)
# A credential in a query string: `?token=…`, `&api_key=…`, `&sig=…` (Azure SAS), `X-Amz-Signature=…`.
URL_QUERY_CREDENTIALS = re.compile(
    r"[?&;](?:[a-z0-9_.-]*[_.-])?(?:api)?(?:token|key|sig|signature|secret|password|passwd|pwd|auth|credentials?)"
    r"=[^&#\s]",
    re.IGNORECASE,
)
BASICS = (
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "NO_COLOR",
    "COLORTERM",
)
TABLE_KEYS = ("inherit", "exclude", "keep", "set")


def _matches(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def is_secret_name(name: str) -> bool:
    """True for a name the secret patterns match (the memory write gate uses it too)."""
    return _matches(name, SECRET_PATTERNS)


def has_url_credentials(text: str) -> bool:
    """True when ``text`` carries a credential in a URL: ``user:password@`` or a query parameter
    named like a secret (``?token=``, ``&key=``, ``&sig=``)."""
    return bool(URL_CREDENTIALS.search(text) or URL_QUERY_CREDENTIALS.search(text))


def _strings(table: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"`shell_environment_policy.{key}` must be an array of strings, got {value!r}")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class EnvPolicy:
    inherit: str = "all"
    exclude: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    set: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_table(cls, table: Mapping[str, Any] | None) -> EnvPolicy:
        """Read the config table. Raises ValueError naming the bad key."""
        table = table or {}
        unknown = sorted(set(table) - set(TABLE_KEYS))
        if unknown:
            raise ValueError(
                f"unknown key(s) in [shell_environment_policy]: {', '.join(unknown)}; expected {', '.join(TABLE_KEYS)}"
            )
        inherit = table.get("inherit", "all")
        if inherit not in ("all", "none"):
            raise ValueError(f'`shell_environment_policy.inherit` must be "all" or "none", got {inherit!r}')
        values = table.get("set", {})
        if not isinstance(values, dict) or not all(isinstance(v, (str, int, float, bool)) for v in values.values()):
            raise ValueError(f"`shell_environment_policy.set` must be a table of strings, got {values!r}")
        as_text = {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()}
        return cls(inherit, _strings(table, "exclude"), _strings(table, "keep"), as_text)

    def is_excluded(self, name: str, secret_names: Iterable[str] = (), value: str = "") -> bool:
        if _matches(name, self.keep):
            return False
        if name.upper() in {secret.upper() for secret in secret_names}:
            return True
        return _matches(name, SECRET_PATTERNS) or _matches(name, self.exclude) or has_url_credentials(value)


def command_env(
    policy: EnvPolicy, environ: Mapping[str, str] | None = None, secret_names: Iterable[str] = ()
) -> dict[str, str]:
    """The environment for a command; ``secret_names`` are extra names to drop (provider keys)."""
    environ = os.environ if environ is None else environ
    secrets = (*PROVIDER_KEY_NAMES, *secret_names)
    names = environ if policy.inherit == "all" else [name for name in BASICS if name in environ]
    env = {name: environ[name] for name in names if not policy.is_excluded(name, secrets, environ[name])}
    env.update(policy.set)
    return env
