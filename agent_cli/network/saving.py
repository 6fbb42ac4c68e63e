""" "Yes, and don't ask again for X": the host goes to the user's own settings,
``[sandbox.network] allowed_domains`` of ``$AGENT_HOME/config.toml`` (tomlkit keeps the file's
comments and layout), and applies from the next session on (this one already allows it)."""

from __future__ import annotations

from pathlib import Path


def save_allowed_domain(config_file: Path, host: str) -> str:
    """Append ``host`` to the file's allowed domains; says where it went (or why it could not)."""
    import tomlkit  # only when the user saves one
    from tomlkit.exceptions import TOMLKitError

    try:
        text = config_file.read_text(encoding="utf-8") if config_file.is_file() else ""
        document = tomlkit.parse(text)
        sandbox = document.get("sandbox")
        if sandbox is None:
            sandbox = tomlkit.table(is_super_table=True)
            document["sandbox"] = sandbox
        network = sandbox.get("network")
        if network is None:
            network = tomlkit.table()
            sandbox["network"] = network
        allowed = network.get("allowed_domains")
        if allowed is None:
            network["allowed_domains"] = tomlkit.array()
            allowed = network["allowed_domains"]
        if host not in allowed:
            allowed.append(host)
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(tomlkit.dumps(document), encoding="utf-8")
    except (OSError, ValueError, AttributeError, TOMLKitError) as exc:
        return f"allowed for this session; could not save it to {config_file}: {exc}"
    return f"saved to {config_file} ([sandbox.network] allowed_domains)"
