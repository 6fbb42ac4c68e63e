"""`agent batch TASKS --out DIR`: run every task, each one `agent exec` in a worktree of its own, on
this machine (--workers) or on a Ray cluster (--ray); `agent batch report DIR` shows the results."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from agent_cli.arguments import add_session_options
from agent_cli.batch.local_pool import Stop, default_workers, handle_stop_signals, run_local
from agent_cli.batch.plan import Plan, make_plan, save
from agent_cli.batch.progress import Progress
from agent_cli.batch.provider_env import provider_options, provider_variables
from agent_cli.batch.ray_pool import RayUnavailable, connect, run_ray
from agent_cli.batch.report import table
from agent_cli.batch.results import ERROR, INTERRUPTED, SUCCEEDED, ResultsFile, TaskResult
from agent_cli.batch.runner import Settings
from agent_cli.batch.tasks import TaskFileError
from agent_cli.headless.common import USAGE_ERROR, check_api_key_or_exit, load_config_or_exit
from agent_cli.headless.exec_options import positive_float, positive_int
from agent_cli.models.base import Usage
from agent_cli.models.pricing import price_for
from agent_cli.terminal_text import terminal_safe
from agent_cli.trust.gate import config_in_force

INTERRUPTED_EXIT = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent batch",
        description="Run many tasks, each one `agent exec` in a git worktree of its own. "
        "`agent batch report DIR` shows a batch's results.",
    )
    parser.add_argument(
        "tasks", metavar="TASKS", help="a JSONL file of tasks, or a Terminal-Bench task folder (or a folder of them)"
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="where results.jsonl and each task's files go; run again to resume"
    )
    parser.add_argument(
        "--workers", type=positive_int, metavar="N", help="tasks at once on this machine (default: the cores, 2 to 8)"
    )
    parser.add_argument("--name", help="the batch's name: branches are agent/NAME-ID (default: DIR's name)")
    parser.add_argument(
        "--timeout", type=positive_float, metavar="S", help="seconds per task, unless the task sets its own"
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=os.environ.get("RAY_ADDRESS"),
        help="run on the Ray cluster at ADDRESS (default $RAY_ADDRESS); needs agent-cli[ray]",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        metavar="N",
        help="with --ray: runs again of a task whose node or worker died (default 3)",
    )
    parser.add_argument(
        "--cpus-per-task",
        type=positive_float,
        default=1.0,
        metavar="N",
        help="with --ray: the CPUs a task asks for (default 1)",
    )
    add_session_options(parser)
    parser.add_argument("--max-turns", type=positive_int, metavar="N", help="per task: stop after N model requests")
    parser.add_argument(
        "--max-budget-usd", type=positive_float, metavar="USD", help="per task: stop once its cost reaches USD"
    )
    parser.add_argument("--trust", action="store_true", help="run the repository's own MCP servers, hooks and plugins")
    parser.add_argument("--full-auto", action="store_true", help="as agent exec --full-auto")
    parser.add_argument(
        "--dangerously-bypass-approvals-and-sandbox",
        "--yolo",
        dest="bypass_sandbox",
        action="store_true",
        help="no sandbox: only inside a disposable machine",
    )
    parser.add_argument("--no-daemon", action="store_true", help="start each agent exec cold (no warm server)")
    return parser


def exec_options(args: argparse.Namespace) -> tuple[str, ...]:
    """The options every task's `agent exec` gets, as the user gave them to `agent batch`."""
    options: list[str] = []
    for flag, value in (
        ("--provider", args.provider),
        ("-m", args.model),
        ("--mode", args.mode),
        ("-s", args.sandbox),
        ("-a", args.approval),
    ):
        if value:
            options += [flag, value]
    for override in args.overrides:
        options += ["-c", override]
    for folder in args.plugin_dirs:
        options += ["--plugin-dir", str(Path(folder).expanduser().resolve())]
    for flag, value in (("--max-turns", args.max_turns), ("--max-budget-usd", args.max_budget_usd)):
        if value is not None:
            options += [flag, str(value)]
    for flag, on in (
        ("--trust", args.trust),
        ("--full-auto", args.full_auto),
        ("--yolo", args.bypass_sandbox),
        ("--no-daemon", args.no_daemon),
    ):
        if on:
            options.append(flag)
    return tuple(options)


def run_batch(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    stdout, stderr = out or sys.stdout, err or sys.stderr
    if argv[:1] == ["report"]:
        return run_report(argv[1:], stdout, stderr)
    args = build_parser().parse_args(argv)
    try:
        return run(args, stdout, stderr)
    except KeyboardInterrupt:  # before the tasks started (reading them, connecting to Ray): nothing ran
        return INTERRUPTED_EXIT


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    args.cd = str(cwd)
    config = config_in_force(load_config_or_exit(args))  # a repository's own provider and prices wait for trust
    check_api_key_or_exit(config)  # before any task: forty tasks failing one by one say it worse
    out_dir = Path(args.out).expanduser().resolve()
    try:
        plan = make_plan(Path(args.tasks).expanduser().resolve(), out_dir, args.name, cwd)
    except TaskFileError as exc:
        print(f"agent: error: {terminal_safe(str(exc))}", file=stderr)
        return USAGE_ERROR
    for rejected in plan.rejected:
        print(f"agent: error: {terminal_safe(rejected.line())} (skipped; the other tasks run)", file=stderr)
    settings = Settings(
        plan.name, exec_options(args), "danger-full-access" if args.bypass_sandbox else args.sandbox, args.timeout
    )
    if args.ray:
        try:
            connect(args.ray)  # an unreachable cluster fails here, before any task starts
        except RayUnavailable as exc:
            print(f"agent: error: {terminal_safe(str(exc))}", file=stderr)
            return USAGE_ERROR
        settings = replace(settings, exec_options=(*provider_options(config), *settings.exec_options))
    save(out_dir, plan.name, Path(args.tasks))
    if plan.finished:
        print(f"agent: {len(plan.finished)} task(s) finished earlier are skipped (results in {out_dir})", file=stderr)
    workers = args.workers or default_workers()
    progress = Progress(len(plan.todo) + len(plan.unplaced), workers, stderr, stderr.isatty(), cost_of(config))
    results = ResultsFile(out_dir)
    stop = Stop(progress)
    done: dict[str, TaskResult] = {}
    try:
        for task, error in plan.unplaced:
            record(
                TaskResult(id=task.id, status=ERROR, error=error, metadata=task.metadata),
                results,
                progress,
                done,
                config,
            )
        with handle_stop_signals(stop):
            if args.ray:
                stream = run_ray(
                    plan.todo,
                    settings,
                    out_dir,
                    progress,
                    stop,
                    provider_variables(config),
                    args.retries,
                    args.cpus_per_task,
                )
            else:
                stream = run_local(plan.todo, settings, out_dir, workers, progress, stop)
            for result in stream:
                record(result, results, progress, done, config)
    finally:
        progress.close()
    return finish(plan, done, stop, stdout)


def record(result: TaskResult, results: ResultsFile, progress: Progress, done: dict[str, TaskResult], config) -> None:
    cost = cost_of(config, result.model)(result.usage) if result.usage else None
    if cost is not None:
        result.usage["cost_usd"] = round(cost, 6)
    results.append(result)  # first: a crash right after loses nothing
    done[result.id] = result
    progress.finished(result)


def cost_of(config, model: str | None = None):
    """A task's usage in USD, at the price of its model (the batch's by default; None when no price
    is known: `[model_prices]` gives one)."""
    try:
        price = price_for(model or config.model, config.raw.get("model_prices"))
    except ValueError:
        price = None

    def cost(usage: dict[str, int]) -> float | None:
        if price is None:
            return None
        fields = ("input_tokens", "cached_input_tokens", "output_tokens")
        return price.cost(Usage(*(int(usage.get(name, 0)) for name in fields)))

    return cost


def finish(plan: Plan, done: dict[str, TaskResult], stop: Stop, stdout: TextIO) -> int:
    records = [done[task.id].__dict__ if task.id in done else plan.finished.get(task.id) for task in plan.tasks]
    shown = [record for record in records if record is not None]
    stdout.write(terminal_safe(table(shown)))
    stdout.flush()
    if stop.is_set() or any(result.status == INTERRUPTED for result in done.values()):
        return INTERRUPTED_EXIT
    all_succeeded = all(record.get("status") == SUCCEEDED for record in shown) and len(shown) == len(plan.tasks)
    return 0 if all_succeeded and not plan.rejected else 1


def run_report(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    parser = argparse.ArgumentParser(prog="agent batch report", description="The results of a batch, as a table.")
    parser.add_argument("out", metavar="DIR")
    args = parser.parse_args(argv)
    records = list(ResultsFile(Path(args.out).expanduser()).read().values())
    if not records:
        print(f"agent: error: {args.out} holds no results (results.jsonl)", file=stderr)
        return 1
    stdout.write(terminal_safe(table(records)))
    return 0
