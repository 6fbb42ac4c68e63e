"""The rules in force for a session, and their verdict on one tool call.

For every target of a call (each simple command of a shell line, each file written by a
redirection, each path a patch touches...) the matching rules decide: a deny rule anywhere wins;
between ask and allow the rule of the later source wins (the same source: ask). The call is
denied when one target is, asked about when one is, and allowed only when every target is
allowed; otherwise no rule decides and the approval policy does, as without rules.

Allow rules from the repository's own files apply only once the folder is trusted (a cloned
repository must not approve its own commands); its deny and ask rules always apply.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.permissions.rules import Rule, Target, parse_rule
from agent_cli.permissions.sources import LoadedRules, Settings, load_rules
from agent_cli.permissions.targets import call_targets

RECENT = 10  # decisions /permissions shows


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: str | None  # allow | ask | deny | None (no rule decides)
    rules: tuple[Rule, ...] = ()  # the rules that decided
    target: str = ""  # for a deny or ask: what it was about
    reason: str = ""  # why an ask asks, when it is not simply the rule's own

    @property
    def rule_text(self) -> str | None:
        return ", ".join(rule.text for rule in self.rules) or None

    def describe(self) -> str:
        where = "; ".join(f"{rule.text} ({rule.source})" for rule in self.rules)
        return f"{self.decision} by {where}" if self.rules else "no rule"


NO_RULE = Verdict(None)


@dataclass
class Permissions:
    rules: list[Rule] = field(default_factory=list)
    cwd: Path = field(default_factory=Path.cwd)
    trusted: bool = False  # the repository's allow rules apply
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    recent: deque = field(default_factory=lambda: deque(maxlen=RECENT))  # (tool, summary, Verdict)
    session_rules: list[Rule] = field(default_factory=list)  # this session's only: kept across reloads

    @classmethod
    def from_config(cls, config: Settings, trusted: bool = False) -> Permissions:
        loaded: LoadedRules = load_rules(config)
        return cls(loaded.rules, config.cwd, trusted, loaded.warnings, loaded.files)

    def reload(self, config: Settings) -> None:
        loaded = load_rules(config)
        self.rules, self.warnings, self.files = loaded.rules + self.session_rules, loaded.warnings, loaded.files

    def add_session_rule(self, text: str, kind: str, source: str) -> Rule:
        """A rule for this session only (an SDK host's "always allow"), ranked above every loaded
        one; raises RuleError for text that is not a rule."""
        rank = 1 + max((rule.rank for rule in self.rules), default=0)
        rule = parse_rule(text, kind, source, self.cwd, rank)
        self.session_rules.append(rule)
        self.rules.append(rule)
        return rule

    def active(self, rule: Rule) -> bool:
        return self.trusted or not (rule.repository and rule.kind == "allow")

    def judge(self, target: Target) -> Verdict:
        """The verdict of the rules on one target."""
        deciding: Rule | None = None
        for rule in self.rules:
            if not self.active(rule) or not self._matches(rule, target):
                continue
            if rule.kind == "deny":
                return Verdict("deny", (rule,), target.value)
            if deciding is None or rule.rank > deciding.rank or (rule.rank == deciding.rank and rule.kind == "ask"):
                deciding = rule
        if deciding is None or deciding.kind == "allow":
            # `python -c …`, `… | sh`, `$(echo rm) x`: what runs is not on the line, so no deny or
            # ask rule can be shown not to match it. It counts as matching them all: a question.
            opaque = next((t.value for t in target.also if t.kind == "opaque"), None)
            guards = self.guards() if opaque is not None else ()
            if guards:
                named = ", ".join(f"`{rule.text}` ({rule.source})" for rule in guards[:3])
                more = f" and {len(guards) - 3} more" if len(guards) > 3 else ""
                return Verdict(
                    "ask",
                    guards,
                    target.value,
                    reason=(
                        f"{opaque}, so the rules cannot tell what it runs; it counts as matching the "
                        f"permission rules {named}{more}"
                    ),
                )
        return Verdict(deciding.kind, (deciding,), target.value) if deciding else NO_RULE

    def guards(self) -> tuple[Rule, ...]:
        """The Bash deny and ask rules in force that name commands: what a command the rules cannot
        see through counts as matching."""
        return tuple(rule for rule in self.rules if rule.kind != "allow" and rule.tool == "Bash" and rule.specifier)

    @staticmethod
    def _matches(rule: Rule, target: Target) -> bool:
        if rule.matches(target):
            return True
        return rule.kind != "allow" and any(rule.matches(other) for other in target.also)

    def decide(self, tool: str, args: dict[str, Any]) -> Verdict:
        """The rules' verdict on a tool call (our tool names or Claude Code's)."""
        if not self.rules:
            return NO_RULE
        targets, readable = call_targets(tool, args, self.cwd, resolve=bool(self.guards()))
        verdicts = [self.judge(target) for target in targets]
        for kind in ("deny", "ask"):
            if found := next((v for v in verdicts if v.decision == kind), None):
                return found
        if readable and verdicts and all(v.decision == "allow" for v in verdicts):
            return Verdict("allow", tuple(dict.fromkeys(rule for v in verdicts for rule in v.rules)))
        return NO_RULE

    def note(self, tool: str, summary: str, verdict: Verdict) -> None:
        self.recent.append((tool, summary, verdict))

    def read_denied(self, path: Path | str, tool: str = "Read") -> Rule | None:
        """The deny rule that hides ``path`` from reading tools (read_file, grep, list_dir, @path)."""
        if not self.rules:
            return None
        verdict = self.judge(Target(tool, "read", str(path)))
        return verdict.rules[0] if verdict.decision == "deny" else None

    def hides_any(self) -> bool:
        return any(rule.kind == "deny" and rule.tool == "Read" and rule.specifier for rule in self.rules)
