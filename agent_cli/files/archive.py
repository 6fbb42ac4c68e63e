"""Archives (zip, tar, tar.gz/bz2/xz): the member list with sizes. Nothing is extracted.

A zip's directory is at its end, so its member count is exact; a compressed tar is read as a
stream and only as far as the members listed.
"""

from __future__ import annotations

import tarfile
import zipfile
from itertools import islice

from agent_cli.files.view import FileReadError, FileView, Reading


def read_archive(reading: Reading) -> FileView:
    limit = reading.limits.archive_max_members
    try:
        if zipfile.is_zipfile(reading.path):
            with zipfile.ZipFile(reading.path) as archive:
                members = archive.infolist()
                rows = [f"{m.file_size:>12,}  {m.filename}" for m in members[:limit]]
                total: int | None = len(members)
                unpacked = sum(m.file_size for m in members)
        else:
            with tarfile.open(reading.path, mode="r:*") as archive:
                listed = list(islice(archive, limit + 1))
                rows = [f"{m.size:>12,}  {m.name}{'/' if m.isdir() else ''}" for m in listed[:limit]]
                total = len(listed) if len(listed) <= limit else None
                unpacked = sum(m.size for m in listed[:limit])
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise FileReadError(f"cannot list this {reading.label} ({reading.size:,} bytes): {exc}") from None
    counted = f"{total:,} members, {unpacked:,} bytes unpacked" if total is not None else "more members than listed"
    notes = []
    if total is None:
        notes.append(f"first {limit} members shown; the rest were not read")
    elif total > limit:
        notes.append(f"first {limit} of {total:,} members shown")
    header = f"{reading.label}, {reading.size:,} bytes: {counted} (nothing extracted)"
    return FileView("\n".join([header, *rows]) if rows else f"{header}\n(empty archive)", tuple(notes))
