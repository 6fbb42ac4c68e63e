"""The session's side of permission rules and trust: load the rules for the folder's trust, and
save a rule the user chose with "Yes, and don't ask again"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli.permissions.engine import Permissions
from agent_cli.permissions.sources import project_root
from agent_cli.permissions.writer import DESTINATIONS, remembered_destination, save_allow_rule
from agent_cli.trust.gate import TrustState, record_answer

if TYPE_CHECKING:
    from agent_cli.config import Config
    from agent_cli.session.approvals import Approvals

DEFAULT_DESTINATION = "agent"


def install_rules(approvals: Approvals, config: Config, trust: TrustState) -> None:
    approvals.permissions = Permissions.from_config(config, trusted=trust.trusted)

    def save(rule: str) -> str:
        return save_rule(approvals, config, rule)

    approvals.save_rule = save


def save_rule(approvals: Approvals, config: Config, rule: str) -> str:
    """Write ``rule`` to the chosen file, reload the rules, and say where it went."""
    destination = remembered_destination(config.agent_home) or DEFAULT_DESTINATION
    was_trusted = approvals.permissions.trusted
    try:
        path = save_allow_rule(rule, destination, project_root(config.cwd))
    except (OSError, ValueError) as exc:
        return f"could not save the rule `{rule}`: {exc}"
    config.layers = reload_project_layer(config)
    # The user wrote this rule: the folder's new content is as trusted as before (or trusted now,
    # when it held nothing to ask about), so the next matching call is not asked about.
    if was_trusted or not any(item.kind != "allow rule" for item in record_answer(config, True).inventory.items):
        record_answer(config, True)
        approvals.permissions.trusted = True
    approvals.permissions.reload(config)
    return f"saved `{rule}` to {path}: matching calls are no longer asked about"


def reload_project_layer(config: Config):
    """The config layers with the project's .agent/config.toml read again (a rule was added)."""
    from agent_cli.config import ConfigLayer, find_project_config, read_toml

    layers = [layer for layer in config.layers if layer.kind != "project"]
    path = find_project_config(config.cwd)
    if path is None:
        return layers
    index = next((i for i, layer in enumerate(layers) if layer.kind == "override"), len(layers))
    layers.insert(index, ConfigLayer("project", str(path), path, read_toml(path)))
    return layers


__all__ = ["DESTINATIONS", "install_rules", "save_rule"]
