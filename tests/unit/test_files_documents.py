"""read_file and @path on notebooks, PDFs, archives, media and other encodings, all made here."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from agent_cli.commands.expand import expand
from agent_cli.commands.text import Template
from agent_cli.config import ConfigError, load_config
from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.read_file import ReadFileTool

# A 10x5 PNG, as a notebook stores it.
PNG_10x5 = "iVBORw0KGgoAAAANSUhEUgAAAAoAAAAFCAYAAAB8ZH1oAAAADklEQVR4nGNgGAWDEwAAAZoAAR2gw5gAAAAASUVORK5CYII="


def minimal_pdf(lines: list[str]) -> bytes:
    """A valid one-page PDF showing ``lines`` in Helvetica, with a correct xref table."""
    text = "".join(f"({line}) Tj T* " for line in lines)
    stream = f"BT /F1 18 Tf 20 TL 72 720 Td {text}ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "home")


async def read(ctx: ToolContext, path: str, **extra) -> str:
    return (await ReadFileTool().run({"path": path, **extra}, ctx)).output


def notebook() -> dict:
    def code(number: int, source: str, *outputs: dict) -> dict:
        return {
            "cell_type": "code",
            "execution_count": number,
            "source": source,
            "outputs": list(outputs),
            "metadata": {},
        }

    traceback = [
        "\x1b[0;31m---------\x1b[0m",
        *(f"frame {i}" for i in range(20)),
        "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero",
    ]
    return {
        "cells": [
            {"cell_type": "markdown", "source": ["# Sales\n", "Monthly totals."], "metadata": {}},
            code(1, "print('x' * 5000)", {"output_type": "stream", "name": "stdout", "text": ["x" * 5000 + "\n"]}),
            code(
                2,
                "1 / 0",
                {
                    "output_type": "error",
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "traceback": traceback,
                },
            ),
            code(
                3,
                "plot()",
                {
                    "output_type": "display_data",
                    "metadata": {},
                    "data": {"image/png": PNG_10x5, "text/plain": ["<Figure size 10x5>"]},
                },
            ),
        ],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


async def test_a_notebook_shows_cells_outputs_images_and_errors(ctx, tmp_path):
    (tmp_path / "analysis.ipynb").write_text(json.dumps(notebook()))
    out = await read(ctx, "analysis.ipynb")
    assert out.startswith(
        "Jupyter notebook, kernel python3: 4 cells (1 markdown, 3 code)\n"
        "--- cell 1 [markdown] ---\n# Sales\nMonthly totals.\n"
        "--- cell 2 [code] (execution 1) ---\nprint('x' * 5000)\n[output: stdout]\n"
        + "x" * 2000
        + "\n…[output cut: 3,001 more chars]\n"
    )
    assert (
        "--- cell 3 [code] (execution 2) ---\n1 / 0\n[error: ZeroDivisionError: division by zero]\n"
        + "\n".join(f"frame {i}" for i in range(11, 20))
        + "\nZeroDivisionError: division by zero\n"
    ) in out
    assert out.endswith("[output: display_data]\n<Figure size 10x5>\n[image: image/png, 71 bytes, 10x5 px]")


async def test_a_pdf_is_converted_cached_and_read_by_page(ctx, tmp_path):
    (tmp_path / "report.pdf").write_bytes(minimal_pdf(["Quarterly report", "Revenue grew 12 percent"]))
    out = await read(ctx, "report.pdf")
    assert out == (
        '1\tQuarterly report\n2\tRevenue grew 12 percent\n[PDF converted to markdown; pages="N-M" reads a page range]'
    )
    cached = list((tmp_path / "home" / "cache" / "documents").glob("*.md"))
    assert len(cached) == 1
    cached[0].write_text("from the cache\n")  # the next read uses the cache, not the PDF
    assert (await read(ctx, "report.pdf")).startswith("1\tfrom the cache\n")
    assert await read(ctx, "report.pdf", pages="1") == (
        "1\t<!-- pages 1-1 of 1 -->\n2\tQuarterly report\n3\tRevenue grew 12 percent\n[PDF converted to markdown]"
    )
    with pytest.raises(ToolError, match="pages 2-3: the PDF has 1 page$"):
        await read(ctx, "report.pdf", pages="2-3")
    with pytest.raises(ToolError, match='pages must be a page number or a range like "2-5"'):
        await read(ctx, "report.pdf", pages="first")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a PDF\n")
    with pytest.raises(ToolError, match="cannot read this PDF: "):
        await read(ctx, "broken.pdf", pages="1")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ToolError, match="pages applies to PDF files only; this is text"):
        await read(ctx, "notes.txt", pages="1")


def test_without_the_docs_extra_one_line_names_it(tmp_path):
    """A fresh interpreter where markitdown cannot be imported (sys.modules entry None)."""
    (tmp_path / "r.pdf").write_bytes(minimal_pdf(["hello"]))
    script = (
        "import sys, asyncio; sys.modules['markitdown'] = None\n"
        "from pathlib import Path\n"
        "from agent_cli.tools.base import ToolContext, ToolError\n"
        "from agent_cli.tools.read_file import ReadFileTool\n"
        f"ctx = ToolContext(cwd=Path({str(tmp_path)!r}), data_dir=Path({str(tmp_path)!r}) / 'home')\n"
        "try:\n    asyncio.run(ReadFileTool().run({'path': 'r.pdf'}, ctx))\n"
        "except ToolError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout == "reading PDF files needs the `docs` extra: pip install 'agent-cli[docs]'\n"


async def test_archives_list_members_without_extracting(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "home", output_token_limit=20_000)
    with zipfile.ZipFile(tmp_path / "bundle.zip", "w") as archive:
        for i in range(250):
            archive.writestr(f"src/file{i}.txt", "y" * i)
    out = await read(ctx, "bundle.zip")
    lines = out.splitlines()
    assert lines[0].startswith("zip archive, ") and lines[0].endswith(
        ": 250 members, 31,125 bytes unpacked (nothing extracted)"
    )
    assert lines[1] == "           0  src/file0.txt" and lines[200] == "         199  src/file199.txt"
    assert lines[201] == "[first 200 of 250 members shown]"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in (("pkg/a.py", b"print(1)\n"), ("pkg/b.py", b"")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (tmp_path / "release.tar.gz").write_bytes(buffer.getvalue())
    out = await read(ctx, "release.tar.gz")
    assert out.splitlines()[1:] == ["           9  pkg/a.py", "           0  pkg/b.py"]
    assert ": 2 members, 9 bytes unpacked (nothing extracted)" in out
    assert not (tmp_path / "pkg").exists()


async def test_a_text_file_starting_like_a_bitmap_stays_text(ctx, tmp_path):
    (tmp_path / "notes").write_text("BMW service notes\nline two\n")
    assert await read(ctx, "notes") == "1\tBMW service notes\n2\tline two"


async def test_audio_and_video_are_described_not_read(ctx, tmp_path):  # images: test_images_*.py
    (tmp_path / "talk.mp3").write_bytes(b"ID3\x04" + b"\0" * 2000)
    (tmp_path / "clip.bin").write_bytes(b"\0\0\0\x18ftypmp42" + b"\0" * 100)
    with pytest.raises(ToolError, match=r"talk.mp3 is audio \(MP3 audio, 2.0 KiB\); it cannot be read as text"):
        await read(ctx, "talk.mp3")
    with pytest.raises(ToolError, match=r"clip.bin is video \(MP4 video, 112 bytes\)"):
        await read(ctx, "clip.bin")


async def test_encodings_with_byte_order_marks(ctx, tmp_path):
    (tmp_path / "u16.txt").write_bytes("héllo\nwörld\n".encode("utf-16"))
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfone\ntwo\n")
    assert await read(ctx, "u16.txt") == "1\théllo\n2\twörld"
    assert await read(ctx, "bom.txt") == "1\tone\n2\ttwo"


async def test_at_path_attaches_through_the_same_processors(tmp_path):
    (tmp_path / "rows.csv").write_text("a,b\n" + "".join(f"{i},{i * 2}\n" for i in range(100)))
    (tmp_path / "r.pdf").write_bytes(minimal_pdf(["Attached PDF text"]))
    (tmp_path / "shot.png").write_bytes(base64.b64decode(PNG_10x5))
    result = await expand(
        Template.typed("look at @rows.csv and @r.pdf and @shot.png"),
        cwd=tmp_path,
        max_bytes=4_000,
        run_command=None,
        cache_dir=tmp_path / "cache",
    )
    assert (
        '<attached_file path="rows.csv" type="CSV">\nCSV: 100 rows + header, 2 columns, delimiter \',\'\n'
        "header\ta,b\n1\t0,0\n"
    ) in result.text
    assert "[rows 1-20 and 91-100 of 100 shown; use offset/limit for others]\n</attached_file>" in result.text
    assert '<attached_file path="r.pdf" type="PDF">\n1\tAttached PDF text\n[PDF converted to markdown' in result.text
    assert 'shot.png"' not in result.text and result.images == (tmp_path / "shot.png",)  # sent as an image


def test_read_file_table_in_config_is_validated(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    config = load_config(tmp_path, ["read_file.table_head_rows=5"])
    assert config.read_file.table_head_rows == 5 and config.read_file.max_depth == 5
    with pytest.raises(ConfigError, match=r"-c read_file.max_depht=3: unknown key\(s\) in \[read_file\]: max_depht"):
        load_config(tmp_path, ["read_file.max_depht=3"])
    with pytest.raises(ConfigError, match=r"`read_file.parse_max_mb` must be an integer >= 1, got 0"):
        load_config(tmp_path, ["read_file.parse_max_mb=0"])
