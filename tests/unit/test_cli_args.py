"""`agent exec` arguments: options are accepted before and after `resume` (fault 4 of issue 16)."""

from __future__ import annotations

import pytest

from agent_cli.cli import parse_exec_args


@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "M", "--json", "resume", "--last", "go on"],
        ["resume", "--last", "-m", "M", "--json", "go on"],
        ["--json", "resume", "-m", "M", "--last", "go on"],
        ["--model=M", "--json", "resume", "--last", "go on"],
    ],
)
def test_exec_options_before_and_after_resume(argv):
    args = parse_exec_args(argv)
    assert (args.resume, args.last, args.model, args.json, args.words) == (True, True, "M", True, ["go on"])


def test_resume_with_an_id_and_options_on_both_sides():
    args = parse_exec_args(["-c", "x=1", "resume", "3f2a", "-o", "out.txt", "next"])
    assert (args.resume, args.words, args.overrides, args.output_last_message) == (
        True,
        ["3f2a", "next"],
        ["x=1"],
        "out.txt",
    )


@pytest.mark.parametrize(
    "argv, prompt",
    [
        (["-m", "resume", "fix it"], "fix it"),  # `resume` as an option's value is not the subcommand
        (["--json", "summarize the resume"], "summarize the resume"),
        (["-"], "-"),
    ],
)
def test_a_prompt_is_not_mistaken_for_resume(argv, prompt):
    args = parse_exec_args(argv)
    assert not getattr(args, "resume", False) and args.prompt == prompt
