"""The session's side of permission rules and trust: load the rules for the folder's trust, and
save a rule the user chose with "Yes, and don't ask again"."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agent_cli.config import Config, ConfigLayer, find_project_config, read_toml
from agent_cli.permissions.engine import Permissions
from agent_cli.permissions.rules import parse_rule
from agent_cli.permissions.sources import project_root
from agent_cli.permissions.writer import DESTINATIONS, remember_destination, remembered_destination, save_allow_rule
from agent_cli.trust.gate import TrustState, record_answer, trust_state

if TYPE_CHECKING:
    from agent_cli.session.approvals import Approvals

DEFAULT_DESTINATION = "agent"


def install_rules(approvals: Approvals, config: Config, trust: TrustState) -> None:
    approvals.permissions = Permissions.from_config(config, trusted=trust.trusted)

    def save(rule: str, save_to: str | None) -> str:
        return save_rule(approvals, config, rule, save_to)

    def files() -> tuple[str, ...]:
        remembered = remembered_destination(config.agent_home)
        return (remembered,) if remembered else tuple(DESTINATIONS)

    approvals.save_rule = save
    approvals.rule_files = files


def save_rule(approvals: Approvals, config: Config, rule: str, save_to: str | None = None) -> str:
    """Write ``rule`` to the chosen file, reload the rules, and say where it went."""
    if save_to in DESTINATIONS and remembered_destination(config.agent_home) is None:
        remember_destination(config.agent_home, save_to)  # the user picks once
    destination = (
        save_to if save_to in DESTINATIONS else remembered_destination(config.agent_home) or DEFAULT_DESTINATION
    )
    try:
        parse_rule(rule, "allow", "the approval dialog", config.cwd)
        before = with_project_layer_reread(config)  # the folder as it is now, not as the session began
        trusted_before = trust_state(before).trusted
        path = save_allow_rule(rule, destination, project_root(config.cwd))
        after = with_project_layer_reread(config)
    except (OSError, ValueError) as exc:  # RuleError, a file that is not TOML or JSON
        return f"could not save the rule `{rule}`: {exc}"
    # The user wrote this rule: the folder's new content is as trusted as before (a folder that held
    # nothing of its own was trusted), so the next matching call is not asked about. Anything else
    # changed since (a rule the model wrote) keeps the folder untrusted.
    if trusted_before:
        record_answer(after, True)
        approvals.permissions.trusted = True
    approvals.permissions.reload(after)
    if not approvals.permissions.trusted:
        return f"saved `{rule}` to {path}: it applies once you trust this folder (until then, for this session)"
    return f"saved `{rule}` to {path}: matching calls are no longer asked about"


def with_project_layer_reread(config: Config) -> Config:
    """``config`` with its layers as they are now: the project's .agent/config.toml read again
    (a rule was added). Only trust and the rules read the layers; the session's config stays."""
    layers = [layer for layer in config.layers if layer.kind != "project"]
    path = find_project_config(config.cwd)
    if path is not None:
        index = next((i for i, layer in enumerate(layers) if layer.kind == "override"), len(layers))
        layers.insert(index, ConfigLayer("project", str(path), path, read_toml(path)))
    return replace(config, layers=tuple(layers))
