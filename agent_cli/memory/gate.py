"""What may be written to memory: not empty, not oversized, nothing that looks like a secret.

Secret-looking names are the shell's own list (``tools/shell_env.SECRET_PATTERNS``: ``*_KEY``,
``*_TOKEN``, ``*PASSWORD*``...), applied to ``name = value`` / ``name: value`` / ``name is value``
in the text. Values that are secrets whatever they are called (private key blocks, provider key
prefixes, long random-looking strings, credentials in URLs) are refused as well, and so is prose
that gives a password, passphrase or login ("the prod login is admin / Sup3rS3cret!", a quoted
passphrase).
"""

from __future__ import annotations

import re

from agent_cli.memory.model import MemoryError
from agent_cli.tools.shell_env import has_url_credentials, is_secret_name

MAX_CHARS = 1_000
# "api key: abc123", "DB_PASSWORD=hunter2", "the deploy token is 9f8e...": a name of up to three
# words, then an assignment, then a value.
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z][\w-]*(?:[ \t][A-Za-z][\w-]*){0,2})\s*(?:[:=]|\bis\b|\bwas\b)\s*[\"'`]?(?P<value>[^\s\"'`,;]+)"
)
_SECRET_VALUES = (
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("an API key", re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}")),
    ("an access token", re.compile(r"\b(?:gh[pousr]_|github_pat_|glpat-|xox[abprs]-)[A-Za-z0-9_-]{16,}")),
    ("an AWS access key", re.compile(r"\bA(?:KIA|SIA)[0-9A-Z]{16}\b")),
    ("a JSON web token", re.compile(r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+")),
)
# "the prod login is admin / Sup3rS3cret!", "ssh passphrase: 'blue horse battery'": a word for a
# password, a few more words, then an assignment and what follows it on the line.
_SECRET_WORD = re.compile(
    r"\b(?:pass(?:word|phrase|wd|code)?|pwd|pin|login|credentials?|secret)s?\b[^.\n:=]{0,40}?"
    r"(?:\bis\b|\bare\b|\bwas\b|[:=])\s*(?P<rest>[^\n]{1,120})",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"^[\"'“‘](?P<quoted>[^\"'”’\n]{4,})[\"'”’]")
_RANDOM = re.compile(r"[A-Za-z0-9+/_=-]{32,}")


def check_text(text: str) -> str:
    """The text to store (whitespace trimmed). Raises MemoryError saying why it is refused."""
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        raise MemoryError("refused: the memory is empty")
    if len(text) > MAX_CHARS:
        raise MemoryError(
            f"refused: {len(text):,} characters; a memory holds at most {MAX_CHARS:,} (keep one fact per memory)"
        )
    if reason := secret_in(text):
        raise MemoryError(f"refused: it looks like it contains {reason}; never store secrets in memory")
    return text


def secret_in(text: str) -> str | None:
    """What kind of secret ``text`` seems to hold, or None."""
    for kind, pattern in _SECRET_VALUES:
        if pattern.search(text):
            return kind
    if has_url_credentials(text):
        return "a credential in a URL"
    for match in _SECRET_WORD.finditer(text):
        rest = match["rest"].strip()
        if _QUOTED.match(rest) or any(_value_like(word) for word in re.split(r"[\s/,;]+", rest)[:2]):
            return "a password or login"
    for match in _ASSIGNMENT.finditer(text):
        words = re.split(r"[ \t-]+", match["name"])
        # the name's last one, two or three words joined, also as a suffix ("the deploy token" ->
        # DEPLOY_TOKEN, "token" -> _TOKEN), so the variable-name globs apply to prose
        names = {prefix + "_".join(words[start:]) for start in range(len(words)) for prefix in ("", "_")}
        if any(is_secret_name(name) for name in names) and _value_like(match["value"]):
            return f"a secret value ({match['name'].strip()})"
    for run in _RANDOM.findall(text):
        if _random_looking(run):
            return "a long random-looking string (a key or token?)"
    return None


def _value_like(value: str) -> bool:
    """A password or key value rather than a word ("the API key is stored in vault")."""
    return len(value) >= 16 or (
        len(value) >= 6 and bool(re.search(r"\d", value)) and bool(re.search(r"[A-Za-z]", value))
    )


def _random_looking(run: str) -> bool:
    """Mixed case and digits; a hex digest (a commit id) or a path-like word does not count."""
    if re.fullmatch(r"[0-9a-fA-F]+", run) or run.count("/") > 1:
        return False
    return bool(re.search(r"[a-z]", run) and re.search(r"[A-Z]", run) and re.search(r"\d", run))
