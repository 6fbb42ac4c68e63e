"""Tables and code in answers at a narrow width: wrapped, not cut; tables as wide as their
columns, one line per row, `---:` columns aligned right (issue 35, items 7 and 8)."""

from __future__ import annotations

from tests.fake_server import Reply
from tests.tui.helpers import screen_text, wait_idle

CODE_LINE = "values = [" + ", ".join(f"'item{n:03d}'" for n in range(14)) + "]"  # ~150 characters
ANSWER = f"""The figures:

| column_a_with_a_long_name | count |
|---|---:|
| alpha | 7 |
| a longer first column value that needs wrapping at seventy columns | 1,234 |

```python
{CODE_LINE}
```
"""


async def test_tables_and_code_wrap_at_seventy_columns(make_app, server):
    assert len(CODE_LINE) >= 150
    server.script(Reply(text=ANSWER))
    app = make_app()
    async with app.run_test(size=(70, 40)) as pilot:
        app.send("show me")
        await wait_idle(pilot)
        await pilot.pause(0.3)
        shown = screen_text(app)
    lines = shown.splitlines()
    assert "column_a_with_a_long_name" in shown and "…" not in shown  # no cell cut short
    assert "that needs wrapping" in shown and "seventy columns" in shown
    code = "".join(line.strip() for line in lines if "item" in line or "values" in line)
    for n in (0, 7, 13):
        assert f"'item{n:03d}'" in code  # every part of the long line is on screen
    header = next(line for line in lines if "column_a_with_a_long_name" in line)
    alpha = next(line for line in lines if "alpha" in line)
    assert alpha.rstrip().endswith("7") and len(alpha.rstrip()) == len(header.rstrip())  # ---: is right-aligned
    at = lines.index(header)
    assert lines[at + 1].strip().startswith("alpha")  # no rule between the header and the rows


async def test_a_small_table_is_as_wide_as_its_columns(make_app, server):
    server.script(Reply(text="| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.send("table")
        await wait_idle(pilot)
        await pilot.pause(0.3)
        lines = screen_text(app).splitlines()
    rows = [
        line for line in lines if line.strip() in ("a  b", "1  2", "3  4") or line.strip().startswith(("a", "1", "3"))
    ]
    table = [line.strip() for line in rows if len(line.strip()) <= 10]
    assert table[-3:] == ["a  b", "1  2", "3  4"]  # three lines: no rules, no stretching
