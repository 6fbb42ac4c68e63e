"""What kind of file a path holds: from its extension first, then from its first bytes.

The kind picks the processor that shows the file to the model. Images are a kind of their own
(the image support shows them as images); anything else that is not text is described, never
shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SNIFF_BYTES = 8192

TEXT = "text"
CSV = "csv"
TSV = "tsv"
JSON = "json"
JSONL = "jsonl"
YAML = "yaml"
XML = "xml"
NOTEBOOK = "notebook"
DOCUMENT = "document"  # PDF, DOCX, PPTX, XLSX: converted to markdown
ARCHIVE = "archive"
IMAGE = "image"
AUDIO = "audio"
VIDEO = "video"
BINARY = "binary"

_EXTENSIONS: dict[str, tuple[str, str]] = {
    ".csv": (CSV, "CSV"),
    ".tsv": (TSV, "TSV"),
    ".tab": (TSV, "TSV"),
    ".json": (JSON, "JSON"),
    ".geojson": (JSON, "JSON"),
    ".jsonl": (JSONL, "JSON Lines"),
    ".ndjson": (JSONL, "JSON Lines"),
    ".yaml": (YAML, "YAML"),
    ".yml": (YAML, "YAML"),
    ".xml": (XML, "XML"),
    ".svg": (XML, "SVG (XML)"),
    ".ipynb": (NOTEBOOK, "Jupyter notebook"),
    ".pdf": (DOCUMENT, "PDF"),
    ".docx": (DOCUMENT, "DOCX"),
    ".pptx": (DOCUMENT, "PPTX"),
    ".xlsx": (DOCUMENT, "XLSX"),
    ".zip": (ARCHIVE, "zip archive"),
    ".jar": (ARCHIVE, "zip archive"),
    ".whl": (ARCHIVE, "zip archive"),
    ".tar": (ARCHIVE, "tar archive"),
    ".tgz": (ARCHIVE, "tar.gz archive"),
    ".tbz2": (ARCHIVE, "tar.bz2 archive"),
    ".txz": (ARCHIVE, "tar.xz archive"),
    ".png": (IMAGE, "PNG image"),
    ".jpg": (IMAGE, "JPEG image"),
    ".jpeg": (IMAGE, "JPEG image"),
    ".gif": (IMAGE, "GIF image"),
    ".webp": (IMAGE, "WebP image"),
    ".bmp": (IMAGE, "BMP image"),
    ".tif": (IMAGE, "TIFF image"),
    ".tiff": (IMAGE, "TIFF image"),
    ".mp3": (AUDIO, "MP3 audio"),
    ".wav": (AUDIO, "WAV audio"),
    ".flac": (AUDIO, "FLAC audio"),
    ".ogg": (AUDIO, "Ogg audio"),
    ".m4a": (AUDIO, "M4A audio"),
    ".aac": (AUDIO, "AAC audio"),
    ".opus": (AUDIO, "Opus audio"),
    ".mp4": (VIDEO, "MP4 video"),
    ".m4v": (VIDEO, "MP4 video"),
    ".mov": (VIDEO, "QuickTime video"),
    ".mkv": (VIDEO, "Matroska video"),
    ".webm": (VIDEO, "WebM video"),
    ".avi": (VIDEO, "AVI video"),
}
_COMPRESSED_TAR = {".gz": "tar.gz archive", ".bz2": "tar.bz2 archive", ".xz": "tar.xz archive"}

_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", IMAGE, "PNG image"),
    (b"\xff\xd8\xff", IMAGE, "JPEG image"),
    (b"GIF87a", IMAGE, "GIF image"),
    (b"GIF89a", IMAGE, "GIF image"),
    (b"II*\x00", IMAGE, "TIFF image"),
    (b"MM\x00*", IMAGE, "TIFF image"),
    (b"%PDF-", DOCUMENT, "PDF"),
    (b"PK\x03\x04", ARCHIVE, "zip archive"),
    (b"PK\x05\x06", ARCHIVE, "zip archive"),  # an empty zip
    (b"fLaC", AUDIO, "FLAC audio"),
    (b"OggS", AUDIO, "Ogg audio"),
    (b"\x1aE\xdf\xa3", VIDEO, "Matroska/WebM video"),
    (b"\x7fELF", BINARY, "ELF executable"),
    (b"\x1f\x8b", BINARY, "gzip archive"),
    (b"\xfd7zXZ\x00", BINARY, "xz archive"),
    (b"\x28\xb5\x2f\xfd", BINARY, "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", BINARY, "7z archive"),
    (b"\x00asm", BINARY, "WebAssembly module"),
    (b"SQLite format 3\x00", BINARY, "SQLite database"),
    (b"\xca\xfe\xba\xbe", BINARY, "Java class or Mach-O universal binary"),
    (b"\xcf\xfa\xed\xfe", BINARY, "Mach-O executable"),
)
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_IMAGE_MIME_TYPES = {
    "PNG image": "image/png",
    "JPEG image": "image/jpeg",
    "GIF image": "image/gif",
    "WebP image": "image/webp",
    "BMP image": "image/bmp",
    "TIFF image": "image/tiff",
}


@dataclass(frozen=True, slots=True)
class Detected:
    kind: str  # one of the constants above
    label: str  # for people and the model: "CSV", "PNG image", "gzip archive"


def detect(path: Path, sample: bytes) -> Detected:
    """The kind of ``path`` whose first bytes are ``sample`` (at least SNIFF_BYTES when it has them)."""
    by_name = _by_extension(path)
    by_content = _by_magic(sample)
    if by_name is None:
        return by_content or (Detected(BINARY, "binary data") if _looks_binary(sample) else Detected(TEXT, "text"))
    if by_name.kind in (CSV, TSV, JSON, JSONL, YAML, XML, NOTEBOOK) and (by_content or _looks_binary(sample)):
        return by_content or Detected(BINARY, "binary data")  # a misnamed binary is not parsed as text
    return by_name


def image_mime_type(sample: bytes) -> str | None:
    """The MIME type of bytes already known to be meant as an image, from their first bytes; None
    when they are no image we know. "BM" counts here: at the start of a file it may as well be text."""
    found = Detected(IMAGE, "BMP image") if sample.startswith(b"BM") else _by_magic(sample)
    return _IMAGE_MIME_TYPES.get(found.label) if found and found.kind == IMAGE else None


def _by_extension(path: Path) -> Detected | None:
    suffixes = [suffix.lower() for suffix in path.suffixes[-2:]]
    if len(suffixes) == 2 and suffixes[0] == ".tar" and suffixes[1] in _COMPRESSED_TAR:
        return Detected(ARCHIVE, _COMPRESSED_TAR[suffixes[1]])
    found = _EXTENSIONS.get(path.suffix.lower())
    return Detected(*found) if found else None


def _by_magic(sample: bytes) -> Detected | None:
    for magic, kind, label in _MAGIC:
        if sample.startswith(magic):
            return Detected(kind, label)
    if sample[:3] == b"ID3" and sample[3:4] in (b"\x02", b"\x03", b"\x04"):
        return Detected(AUDIO, "MP3 audio")
    if sample[:4] == b"RIFF":
        return {
            b"WEBP": Detected(IMAGE, "WebP image"),
            b"WAVE": Detected(AUDIO, "WAV audio"),
            b"AVI ": Detected(VIDEO, "AVI video"),
        }.get(sample[8:12], Detected(BINARY, "RIFF data"))
    if sample[4:8] == b"ftyp":
        brand = sample[8:12]
        if brand in (b"M4A ", b"M4B "):
            return Detected(AUDIO, "M4A audio")
        return Detected(VIDEO, "QuickTime video" if brand == b"qt  " else "MP4 video")
    if sample[257:262] == b"ustar":
        return Detected(ARCHIVE, "tar archive")
    return None


def _looks_binary(sample: bytes) -> bool:
    return b"\0" in sample and not sample.startswith(_TEXT_BOMS)
