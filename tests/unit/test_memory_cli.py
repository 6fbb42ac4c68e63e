"""`agent memory` for scripts: errors say what to do from the command line."""

from __future__ import annotations

import io

from agent_cli.headless.memory_cmd import run_memory


def run(argv: list[str], cwd) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_memory(["-C", str(cwd), *argv], out, err)
    return status, out.getvalue(), err.getvalue()


def test_an_empty_search_is_a_usage_error(tmp_path):
    status, out, err = run(["search", "  "], tmp_path)
    assert (status, out) == (2, "") and "search needs words to look for" in err


def test_forgetting_an_unknown_id_does_not_point_to_a_slash_command(tmp_path):
    status, _, err = run(["forget", "p99"], tmp_path)
    assert status == 1 and "no memory p99" in err and "/memory" not in err
