"""``@path`` attachments and ``` !`cmd` ``` output, expanded once before a prompt is sent.

Order (the same in the TUI and in ``agent exec``):

1. For a command file, arguments are substituted into the body first (``custom.substitute``).
2. The text is scanned once, left to right. Each ``` !`cmd` ``` from typed text or a command
   file's body runs in order of appearance, under the approval policy, and is replaced in place
   by its output and exit code. Each ``@path`` is collected.
3. The attached files (or directory listings) are appended after the text, in order of first
   mention, each file once.

Nothing inserted by a step is scanned again: an argument value is never re-substituted and never
runs as a command, and command output or file content never attaches or runs anything. ``\\@``
and ``\\!`` keep a literal ``@`` or ``!``. An ``@word`` that matches no file is left as text
unless it clearly names a file (``./x``, ``../x``, ``/x``, ``~/x``, ``dir/``, or a name with an
extension), in which case it is an error naming it. Paths must resolve (symlinks followed) inside
the workspace: the git root, or the working directory outside a repository. Files other than
UTF-8 text go through the same processors as ``read_file`` (agent_cli/files).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from agent_cli.commands.errors import InputError
from agent_cli.commands.text import Template
from agent_cli.context.project_doc import find_git_root
from agent_cli.context.truncate import TruncationPolicy, truncate_text
from agent_cli.files.detect import IMAGE, TEXT, Detected
from agent_cli.files.images import is_image_file
from agent_cli.files.limits import ReadLimits
from agent_cli.files.reading import read_view, sniff, special_kind
from agent_cli.files.text import sniff_encoding
from agent_cli.files.view import FileReadError, Reading
from agent_cli.tools.daemon_thread import in_thread

MAX_LISTING_ENTRIES = 200
READ_CHUNK_BYTES = 1 << 20
_TOKEN = re.compile(
    r"""(?P<escape>\\(?=@|!`))
      | !`(?P<command>[^`\n]+)`
      | (?<![\w@/\\])@(?:"(?P<quoted>[^"\n]+)"|(?P<path>[^\s"'`<>()\[\]{},;|]+))""",
    re.VERBOSE,
)
_TRAILING_PUNCTUATION = ".,:;!?"
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,4}$")


@dataclass(frozen=True, slots=True)
class CommandRun:
    """What a ``` !`cmd` ``` produced, as the model will read it."""

    output: str
    exit_code: int | None


RunCommand = Callable[[str], Awaitable[CommandRun]]
# ``@server:uri``: the attachment for an MCP resource, or None when ``server`` is no MCP server.
ReadResource = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True, slots=True)
class Expansion:
    text: str  # what the model receives
    attachments: tuple[Path, ...]  # resolved, in order of first mention
    commands: tuple[str, ...]  # the commands that ran, in order
    images: tuple[Path, ...] = ()  # image attachments: sent as images after the text, not inlined


def workspace_root(cwd: Path) -> Path:
    cwd = Path(cwd).resolve()
    return find_git_root(cwd) or cwd


async def expand(
    template: Template,
    *,
    cwd: Path,
    max_bytes: int,
    run_command: RunCommand | None,
    limits: ReadLimits | None = None,
    cache_dir: Path | None = None,
    read_resource: ReadResource | None = None,
    hidden: Callable[[Path], object] | None = None,
) -> Expansion:
    """The text to send: commands replaced by their output, attachments appended.

    ``max_bytes`` caps each attached file; ``run_command`` None leaves ``` !`cmd` ``` as text;
    ``limits`` and ``cache_dir`` are the file processors' thresholds and document cache; a file
    ``hidden`` names (a Read deny rule) is not attached, and a note says so."""
    text = template.text
    origins = template.origins()
    cwd = Path(cwd).resolve()
    workspace = workspace_root(cwd)
    out: list[str] = []
    attachments: dict[Path | str, str] = {}  # a path, or "server:uri" for an MCP resource
    commands: list[str] = []
    position = 0
    literal_at = -1  # a token starting here was escaped
    for match in _TOKEN.finditer(text):
        start = match.start()
        origin = origins[start]
        if origin == "literal":
            continue
        if match["escape"] is not None:
            follows_command = text.startswith("!`", match.end())
            if origin == "argument" and follows_command:
                continue  # arguments never run commands, so there is nothing to escape
            out.append(text[position:start])
            position = match.end()
            literal_at = match.end()
            continue
        if start == literal_at:
            continue
        if match["command"] is not None:
            if origin == "argument" or run_command is None:
                continue
            command = match["command"].strip()
            out.append(text[position:start])
            out.append(command_block(command, await run_command(command)))
            commands.append(command)
            position = match.end()
            continue
        raw = match["quoted"] if match["quoted"] is not None else match["path"]
        token = raw if match["quoted"] is not None else _strip_punctuation(raw)
        if read_resource is not None and ":" in token and token not in attachments:
            if (block := await read_resource(token)) is not None:
                attachments[token] = block
                continue
        resolved = resolve_reference(token, cwd, workspace)
        if resolved is not None and hidden is not None and (rule := hidden(resolved)):
            attachments[resolved] = f"[@{token} was not attached: the permission rule `{rule}` hides it]"
            continue
        if resolved is not None and resolved not in attachments:
            if is_image_file(resolved):  # the picture itself goes to the model (files/images.py)
                attachments[resolved] = ""
            else:  # in a thread: converting a PDF or counting a big CSV's rows must not stall the TUI
                attachments[resolved] = await in_thread(
                    attachment_block, token, resolved, max_bytes, limits or ReadLimits(), cache_dir
                )
    out.append(text[position:])
    body = "".join(out)
    if blocks := [block for block in attachments.values() if block]:
        body = body.rstrip("\n") + "\n\n" + "\n\n".join(blocks)
    images = tuple(key for key, block in attachments.items() if isinstance(key, Path) and not block)
    files = tuple(key for key in attachments if isinstance(key, Path))  # not MCP resources
    return Expansion(body, files, tuple(commands), images)


def _strip_punctuation(token: str) -> str:
    stripped = token.rstrip(_TRAILING_PUNCTUATION)
    return stripped or token


def looks_like_file(token: str) -> bool:
    if token.startswith(("./", "../", "/", "~/")) or token in (".", "..", "~") or token.endswith("/"):
        return True
    return bool(_EXTENSION.search(token.rsplit("/", 1)[-1]))


def resolve_reference(token: str, cwd: Path, workspace: Path) -> Path | None:
    """The file or folder ``@token`` names, None for a word that is not a path reference.

    Raises InputError for a reference outside the workspace or to a missing file."""
    candidate = (cwd / Path(token).expanduser()).resolve()
    inside = candidate == workspace or candidate.is_relative_to(workspace)
    if not inside:
        if not looks_like_file(token) and not candidate.exists():
            return None
        raise InputError(
            f"@{token}: refused, it is outside the workspace ({workspace}); only files inside it can be attached"
        )
    if candidate.exists():
        return candidate
    if looks_like_file(token):
        raise InputError(f"@{token}: no such file or directory (looked in {cwd}); write \\@ for a literal @")
    return None


def attachment_block(token: str, path: Path, max_bytes: int, limits: ReadLimits, cache_dir: Path | None) -> str:
    if path.is_dir():
        return f"<attached_directory path={quoteattr(token)}>\n{directory_listing(path)}\n</attached_directory>"
    if (kind := special_kind(path)) is not None:
        raise InputError(f"@{token}: refused, it is {kind}, not a file (reading it could block forever)")
    try:
        sample, detected = sniff(path)
        if detected.kind == IMAGE:
            # An image kind the model cannot be shown (SVG, ICO); pictures never get here (expand above).
            return f"<attached_file path={quoteattr(token)}>\n({detected.label}, {path.stat().st_size:,} bytes; not shown)\n</attached_file>"
        if detected.kind != TEXT or sniff_encoding(sample) != "utf-8":
            return processed_block(token, path, sample, detected, max_bytes, limits, cache_dir)
        head = read_head(path, max_bytes)
    except FileReadError as exc:
        raise InputError(f"@{token}: {exc}") from None
    except OSError as exc:
        raise InputError(f"@{token}: cannot read it ({exc.strerror or exc})") from None
    content, shown, cut = numbered_lines(head, max_bytes)
    if cut or shown < head.lines:
        last = f"{shown} (the last one cut)" if cut else str(shown)
        content += (
            f"\n[… truncated: showed lines 1-{last} of {head.lines} ({head.size:,} bytes in all, at most "
            f"{max_bytes:,} attached); read the rest with read_file from line {shown if cut else shown + 1} …]"
        )
    return f'<attached_file path={quoteattr(token)} lines="{head.lines}">\n{content}\n</attached_file>'


def processed_block(
    token: str,
    path: Path,
    sample: bytes,
    detected: Detected,
    max_bytes: int,
    limits: ReadLimits,
    cache_dir: Path | None,
) -> str:
    """A file shown by its type's processor, like read_file shows it, cut to ``max_bytes``."""
    size = path.stat().st_size
    try:
        view = read_view(Reading(path, detected.label, sample, size, max_bytes, limits, cache_dir=cache_dir), detected)
        content = truncate_text(view.render(), TruncationPolicy("bytes", max_bytes))
    except FileReadError as exc:
        content = f"(not shown: {exc})"
    except Exception as exc:  # noqa: BLE001 - a file no processor foresaw must not stop the prompt
        content = f"(not shown: reading it failed: {type(exc).__name__}: {exc})"
    return f"<attached_file path={quoteattr(token)} type={quoteattr(detected.label)}>\n{content}\n</attached_file>"


@dataclass(frozen=True, slots=True)
class FileHead:
    data: bytes  # the first ``max_bytes`` bytes
    size: int  # of the whole file
    lines: int  # in the whole file


def read_head(path: Path, max_bytes: int) -> FileHead:
    """The file's head, and its size and line count read in chunks: a huge file costs no memory."""
    with path.open("rb") as handle:
        data = handle.read(max_bytes)
        size, newlines, last = len(data), data.count(b"\n"), data[-1:]
        while chunk := handle.read(READ_CHUNK_BYTES):
            size, newlines, last = size + len(chunk), newlines + chunk.count(b"\n"), chunk[-1:]
    return FileHead(data, size, newlines + (1 if size and last != b"\n" else 0))


def numbered_lines(head: FileHead, max_bytes: int) -> tuple[str, int, bool]:
    """Whole numbered lines within ``max_bytes``, how many, and whether the last shown one is cut."""
    lines = head.data.decode("utf-8", errors="replace").splitlines()
    partial_tail = len(head.data) < head.size and not head.data.endswith(b"\n")
    if partial_tail and len(lines) > 1:
        lines.pop()  # the head ends inside a line; show whole lines only
    shown: list[str] = []
    used = 0
    for number, line in enumerate(lines, start=1):
        numbered = f"{number:6}\t{line}"
        cost = len(numbered.encode("utf-8")) + 1
        if used + cost > max_bytes:
            if not shown:  # a first line longer than the budget: show its head
                shown.append(numbered.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore"))
                return shown[0], 1, True
            break
        used += cost
        shown.append(numbered)
    cut = partial_tail and len(lines) == 1 and len(shown) == 1
    return "\n".join(shown), len(shown), cut


def directory_listing(path: Path) -> str:
    try:
        entries = sorted(path.iterdir(), key=lambda entry: (not entry.is_dir(), entry.name))
    except OSError as exc:
        return f"(cannot list: {exc.strerror or exc})"
    names = [entry.name + ("/" if entry.is_dir() else "") for entry in entries if entry.name != ".git"]
    if not names:
        return "(empty directory)"
    if len(names) > MAX_LISTING_ENTRIES:
        hidden = len(names) - MAX_LISTING_ENTRIES
        names = names[:MAX_LISTING_ENTRIES] + [f"… {hidden} more entries (use list_dir to see them)"]
    return "\n".join(names)


def command_block(command: str, run: CommandRun) -> str:
    return f"<command_output command={quoteattr(command)}>\n{run.output.rstrip()}\n</command_output>"
