"""read_file on data files made here: CSV/TSV, JSON, JSON Lines, YAML, XML; what the model reads."""

from __future__ import annotations

import csv
import json
import tracemalloc
from pathlib import Path

import pytest

from agent_cli.files.limits import ReadLimits
from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.read_file import ReadFileTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "data")


async def read(ctx: ToolContext, path: str, **extra) -> str:
    return (await ReadFileTool().run({"path": path, **extra}, ctx)).output


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> Path:
    """100,000 rows; row 3 has a quoted newline and a 700-char cell; 60 columns in the header."""
    path = tmp_path_factory.mktemp("csv") / "sales.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "city", "note", *(f"extra{i}" for i in range(57))])
        for row in range(1, 100_001):
            note = "two\nlines " + "n" * 700 if row == 3 else f"note {row}"
            writer.writerow([row, f"city{row % 7}", note, *(["x"] * 57)])
    return path


async def test_a_100000_row_csv_shows_head_tail_and_exact_count(big_csv):
    ctx = ToolContext(cwd=big_csv.parent, data_dir=big_csv.parent / "data", output_token_limit=20_000)
    tracemalloc.start()
    out = await read(ctx, "sales.csv")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    lines = out.splitlines()
    assert lines[0] == "CSV: 100,000 rows + header, 60 columns, delimiter ','"
    assert lines[1].startswith("header\tid,city,note,extra0,") and lines[1].count(",") == 49  # 50 columns kept
    assert lines[2].startswith("1\t1,city1,note 1,x")
    assert '\n3\t3,city3,"two\nlines ' + "n" * 490 + '…[+210 chars]",x,' in out  # the quoted newline stays in its row
    assert "… rows 21-99,990 not shown …" in out
    assert "100000\t100000,city" in out
    assert "[rows 1-20 and 99,991-100,000 of 100,000 shown; use offset/limit for others]" in out
    assert "[1 cell cut to 500 characters]" in out
    assert "[10 columns after the first 50 not shown]" in out
    assert peak < 5_000_000  # rows are streamed, not kept


async def test_csv_offset_and_limit_select_rows(big_csv):
    ctx = ToolContext(cwd=big_csv.parent, data_dir=big_csv.parent / "data")
    out = await read(ctx, "sales.csv", offset=50_000, limit=3)
    rows = [line.split("\t")[0] for line in out.splitlines()[2:5]]
    assert rows == ["50000", "50001", "50002"]
    assert out.endswith(
        "[rows 50,000-50,002 of 100,000 shown; use offset/limit for others]\n[10 columns after the first 50 not shown]"
    )
    with pytest.raises(ToolError, match=r"offset 200000 is past the end \(100,000 rows\)"):
        await read(ctx, "sales.csv", offset=200_000)


async def test_delimiter_is_sniffed_and_tsv_uses_tabs(ctx, tmp_path):
    (tmp_path / "semi.csv").write_text("a;b;c\n1;2;3\n4;5;6\n")
    (tmp_path / "t.tsv").write_text("a\tb\n1\t2\n")
    semi = await read(ctx, "semi.csv")
    assert semi == "CSV: 2 rows + header, 3 columns, delimiter ';'\nheader\ta;b;c\n1\t1;2;3\n2\t4;5;6"
    assert (await read(ctx, "t.tsv")).splitlines()[:3] == [
        "TSV: 1 rows + header, 2 columns, delimiter TAB",
        "header\ta\tb",
        "1\t1\t2",
    ]


async def test_an_unparseable_csv_falls_back_to_text(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data")
    (tmp_path / "bad.csv").write_text('a,b\n"' + "z" * 200_000 + "\n")  # a field over the csv module's limit
    out = await read(ctx, "bad.csv")
    assert out.startswith('1\ta,b\n2\t"zzz') and "shown as text]" in out and "not parsed as CSV" in out


def deep_document() -> dict:
    node: dict = {"leaf": "bottom"}
    for level in range(12):
        node = {f"level{level}": node, "n": level}
    return {"deep": node, "items": list(range(500)), "wide": {f"k{i}": i for i in range(80)}, "long": "é" * 2000}


async def test_a_deep_json_over_budget_is_cut_with_markers(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=1_000)
    (tmp_path / "deep.json").write_text(json.dumps(deep_document(), indent=2))
    out = await read(ctx, "deep.json")
    body, *notes = out.split("\n[")
    cut = json.loads(body)  # still valid JSON
    assert cut["deep"]["level11"]["level10"]["level9"]["level8"] == "{… 2 keys}"
    assert cut["items"][:3] == [0, 1, 2] and cut["items"][-1] == "… 450 more items" and len(cut["items"]) == 51
    assert cut["wide"]["…"] == "30 more keys" and len(cut["wide"]) == 51
    assert cut["long"] == "é" * 500 + "…[+1,500 chars]"
    assert notes[0].startswith("JSON, ") and "structure-preserving cut" in notes[0]
    assert notes[1] == (
        "structure cut: left out 450 array items after the first 50, 30 object keys after the first 50, "
        "1 container deeper than 5 levels, the ends of 1 string over 500 characters]"
    )


async def test_small_json_is_plain_numbered_lines_and_offset_reads_raw_lines(ctx, tmp_path):
    (tmp_path / "small.json").write_text('{\n  "a": 1\n}\n')
    assert await read(ctx, "small.json") == '1\t{\n2\t  "a": 1\n3\t}'
    (tmp_path / "deep.json").write_text(json.dumps(deep_document(), indent=2))
    assert (await read(ctx, "deep.json", offset=2, limit=1)).startswith('2\t  "deep": {')


async def test_invalid_json_over_budget_is_shown_as_text_with_the_error(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=100)
    (tmp_path / "broken.json").write_text('{"a": [' + "1, " * 1000)
    out = await read(ctx, "broken.json")
    assert out.startswith('Total output lines: 2\n\n1\t{"a": [1, 1, 1')
    assert out.endswith("[not parsed as JSON (expected a value at char 3007); shown as text]")


async def test_json_above_parse_limit_shows_raw_head_and_tail(tmp_path):
    ctx = ToolContext(
        cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=500, read_limits=ReadLimits(parse_max_mb=1)
    )
    records = [{"id": i, "name": f"item {i}"} for i in range(60_000)]
    (tmp_path / "huge.json").write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    out = await read(ctx, "huge.json")
    assert out.startswith('[\n{"id": 0, "name": "item 0"},')
    assert out.rstrip().splitlines()[-2] == "]"
    assert "bytes not shown …" in out
    assert "over 1 MB ([read_file] parse_max_mb), so not parsed; the raw head and tail are shown" in out


async def test_json_lines_show_first_and_last_records_each_cut(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=20_000)
    lines = [json.dumps({"i": i, "tags": list(range(60))}) for i in range(1, 1001)]
    (tmp_path / "events.jsonl").write_text("\n".join(lines[:500] + ["{not json"] + lines[500:]) + "\n")
    out = await read(ctx, "events.jsonl")
    shown = out.splitlines()
    assert shown[0].startswith('1\t{"i": 1, "tags": [0, 1,') and shown[0].endswith('49, "… 10 more items"]}')
    assert shown[20] == "… records 21-991 not shown …"
    assert shown[21].startswith('992\t{"i": 991,') and shown[30].startswith('1001\t{"i": 1000,')
    assert "[records 1-20 and 992-1,001 of 1,001 shown; use offset/limit for others]" in out
    middle = await read(ctx, "events.jsonl", offset=501, limit=1)
    assert middle.startswith("501\t{not json  ← not valid JSON")


async def test_yaml_over_budget_is_cut_and_stays_yaml(tmp_path):
    import yaml

    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=2_000)
    (tmp_path / "conf.yaml").write_text(yaml.safe_dump(deep_document()) + "---\nsecond: doc\n")
    out = await read(ctx, "conf.yaml")
    body = out.split("\n[YAML")[0]
    first, second = list(yaml.safe_load_all(body))
    assert first["items"][-1] == "… 450 more items" and second == {"second": "doc"}


async def test_xml_is_cut_safely_and_entity_bombs_are_refused(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=1_000)
    rows = "".join(f'<row id="{i}"><name>n{i}</name></row>' for i in range(300))
    (tmp_path / "data.xml").write_text(f'<?xml version="1.0"?><table xmlns="urn:x">{rows}</table>')
    out = await read(ctx, "data.xml")
    assert out.startswith('<table>\n  <row id="0">\n    <name>n0</name>\n  </row>')
    assert "<!-- … 250 more child elements -->" in out and "structure cut: left out 250 array items" in out
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        "<lolz>&lol2;</lolz>"
    ) + "<!-- padding -->" * 400
    (tmp_path / "bomb.xml").write_text(bomb)
    out = await read(ctx, "bomb.xml")
    assert "not parsed as XML (refused unsafe XML" in out


async def test_cutting_a_large_json_builds_only_what_is_kept(tmp_path):
    """json.load would turn this 0.5 MB of tiny objects into ~12 MB of Python objects."""
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data")
    (tmp_path / "dense.json").write_text("[" + ",".join(['{"a":1}'] * 60_000) + "]")
    tracemalloc.start()
    out = await read(ctx, "dense.json")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert out.endswith("[structure cut: left out 59,950 array items after the first 50]")
    assert peak < 3_000_000


async def test_rows_stop_at_the_output_budget_and_say_which_were_shown(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=150)
    (tmp_path / "wide.csv").write_text("a,b\n" + "".join(f"{i},{'v' * 40}\n" for i in range(1, 1001)))
    out = await read(ctx, "wide.csv")
    shown = [line for line in out.splitlines() if line[:1].isdigit()]
    assert 1 <= len(shown) < 20 and shown[0].startswith("1\t1,vvv")
    assert out.endswith(f"[output budget reached]\n[rows 1-{len(shown)} of 1,000 shown; use offset/limit for others]")


def test_block_row_count_matches_the_csv_module(monkeypatch):
    """Small blocks, so quoted newlines fall across block ends; seeded, so it is the same every run."""
    import io
    import random

    from agent_cli.files import rows

    monkeypatch.setattr(rows, "_BLOCK_CHARS", 64)
    rng = random.Random(7)
    cells = ["a", '"q,x"', '"multi\nline"', '""', '"say ""hi"""', "plain text", "", '"\n"', '"a\nb\nc"']
    for _ in range(400):
        lines = [",".join(rng.choice(cells) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(0, 40))]
        text = "\n".join(lines) + rng.choice(["", "\n", "\r\n"])
        expected = list(csv.reader(io.StringIO(text, newline="")))
        assert rows.count_csv_rows(io.StringIO(text, newline=""), ",", 3) == (len(expected), expected[-3:])


async def test_minified_json_within_budget_is_shown_whole_not_as_a_cut_line(ctx, tmp_path):
    document = {"items": [{"k": i, "v": "x" * 10} for i in range(300)], "meta": {"a": 1}}
    (tmp_path / "min.json").write_text(json.dumps(document))  # one 9 KB line
    out = await read(ctx, "min.json")
    body, note = out.rsplit("\n[", 1)
    assert "line truncated" not in out
    assert json.loads(body) == document  # everything, re-indented
    assert note == "JSON, 9,219 bytes, re-indented; nothing left out (use offset/limit to read raw lines)]"
    assert (await read(ctx, "min.json", offset=1)).startswith('1\t{"items": [{"k": 0,')  # raw lines stay raw


async def test_minified_yaml_and_xml_within_budget_are_shown_whole(ctx, tmp_path):
    (tmp_path / "flow.yaml").write_text("a: 1\nb: [" + ", ".join(str(i) for i in range(300)) + "]\n")
    out = await read(ctx, "flow.yaml")
    assert "- 299\n" in out and "more items" not in out and "nothing left out" in out
    (tmp_path / "min.xml").write_text("<root>" + "".join(f'<item id="{i}"/>' for i in range(100)) + "</root>")
    out = await read(ctx, "min.xml")
    assert '<item id="99"' in out and "more child elements" not in out and "nothing left out" in out
