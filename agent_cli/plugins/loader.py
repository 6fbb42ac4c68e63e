"""Find Claude Code plugins and read what each contributes.

Plugins are looked for in ``--plugin-dir DIR`` (a plugin, or a folder of plugins), then
``<repo>/.agent/plugins/*/`` (repo = git root, else cwd), then ``$AGENT_HOME/plugins/*/``; the
first plugin of a name wins. ``[plugins] disabled = ["name"]`` keeps one listed but inactive.
Components come from the default places (``commands/*.md``, ``agents/*.md``,
``skills/*/SKILL.md``, ``hooks/hooks.json``, ``.mcp.json``) plus the manifest's extra paths.
Nothing here is fatal: a broken manifest or component becomes a warning naming the file.

Plugins feed the existing registries: commands (``/plugin:command``, parsed by the command layer:
:mod:`agent_cli.commands.plugin_commands`), skills (``plugin:skill``),
hooks (in Claude Code's vocabulary) and agents (``plugin:agent``, through :meth:`PluginSet.agent_sources`).
MCP servers are exposed per plugin (:meth:`PluginSet.mcp_sources`) for the MCP server manager.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent_cli.config import Config
from agent_cli.context.project_doc import repository_root
from agent_cli.context.skills import SKILL_FILE, Skill, parse_skill
from agent_cli.hooks.spec import HookSpec
from agent_cli.plugins.claude_hooks import expand_root, parse_plugin_hooks, root_variables
from agent_cli.plugins.manifest import MANIFEST, NAME, Manifest, ManifestError, read_manifest

PLUGINS_DIR = Path(".agent") / "plugins"


@dataclass(frozen=True)
class McpConfig:
    """MCP servers a plugin declares, as written (``${VAR}`` not yet expanded)."""

    origin: Path  # the .mcp.json file, or the manifest for inline servers
    servers: dict[str, Any]
    inline: bool = False  # from the manifest's ``mcpServers`` object rather than a file


@dataclass(frozen=True)
class Plugin:
    name: str
    root: Path
    source: str  # "--plugin-dir", "repo" or "user"
    version: str = ""
    description: str = ""
    author: str = ""
    enabled: bool = True
    command_files: tuple[tuple[str, Path], ...] = ()  # ("plugin:command", file); commands/ parses them
    skills: tuple[Skill, ...] = ()
    hooks: tuple[HookSpec, ...] = ()
    agent_files: tuple[Path, ...] = ()  # agents/*.md, the manifest's folders' *.md, the files it names
    mcp: tuple[McpConfig, ...] = ()

    @property
    def variables(self) -> dict[str, str]:
        """``${VAR}`` values for the plugin's MCP configuration: CLAUDE_PLUGIN_ROOT, AGENT_PLUGIN_ROOT."""
        return root_variables(self.root)

    @property
    def mcp_server_names(self) -> list[str]:
        return [name for config in self.mcp for name in config.servers]


@dataclass(frozen=True)
class PluginSet:
    plugins: tuple[Plugin, ...] = ()  # disabled ones included, for listings
    warnings: tuple[str, ...] = ()

    @property
    def active(self) -> list[Plugin]:
        return [plugin for plugin in self.plugins if plugin.enabled]

    @property
    def skills(self) -> list[Skill]:
        return [skill for plugin in self.active for skill in plugin.skills]

    @property
    def hooks(self) -> list[HookSpec]:
        return [hook for plugin in self.active for hook in plugin.hooks]

    def agent_sources(self) -> list[tuple[str, Path]]:
        """(namespace, agent file) pairs for the agent registry; its agents are "<plugin>:<agent>"."""
        return [(plugin.name, path) for plugin in self.active for path in plugin.agent_files]

    def mcp_sources(self) -> list[tuple[Plugin, McpConfig]]:
        """Each MCP configuration with its plugin (whose ``variables`` expand its ``${VAR}``)."""
        return [(plugin, config) for plugin in self.active for config in plugin.mcp]


def load_plugins_for(config: Config, repository: bool = True) -> PluginSet:
    """``repository=False`` (an untrusted folder): the repository's plugins are listed, inactive."""
    table = config.raw.get("plugins")
    disabled = table.get("disabled", []) if isinstance(table, dict) else []
    found = load_plugins(config.cwd, config.agent_home, config.plugin_dirs, disabled)
    if repository:
        return found
    home = Path(config.agent_home).resolve()  # agent run in ~ without git: ~/.agent/plugins are the user's own
    plugins = tuple(
        replace(plugin, enabled=False) if plugin.source == "repo" and not plugin.root.is_relative_to(home) else plugin
        for plugin in found.plugins
    )
    return PluginSet(plugins, found.warnings)


def load_plugins(
    cwd: Path, agent_home: Path, plugin_dirs: Iterable[Path] = (), disabled: Iterable[str] = ()
) -> PluginSet:
    cwd = Path(cwd).resolve()
    disabled = set(disabled)
    warnings: list[str] = []
    plugins: dict[str, Plugin] = {}
    seen: set[Path] = set()
    for source, root in plugin_folders(cwd, Path(agent_home), plugin_dirs, warnings):
        if root in seen:  # --plugin-dir naming a plugin that is also found in .agent/plugins
            continue
        seen.add(root)
        try:
            manifest = read_manifest(root)
        except ManifestError as exc:
            warnings.append(f"{exc}; plugin skipped")
            continue
        if manifest.name in plugins:
            warnings.append(
                f"plugin {manifest.name!r} in {root}: a plugin of that name was already "
                f"found in {plugins[manifest.name].root}; skipped"
            )
            continue
        if manifest.name in disabled:  # listed, but none of its files is read
            plugins[manifest.name] = Plugin(
                manifest.name, root, source, manifest.version, manifest.description, manifest.author, enabled=False
            )
            continue
        warnings.extend(manifest.warnings)
        try:
            plugins[manifest.name] = read_plugin(manifest, source, cwd, warnings)
        except OSError as exc:  # an unreadable folder inside the plugin
            warnings.append(
                f"plugin {manifest.name!r} in {root}: cannot read {exc.filename or ''} ({exc.strerror or exc}); skipped"
            )
    return PluginSet(tuple(plugins.values()), tuple(warnings))


def plugin_folders(
    cwd: Path, agent_home: Path, plugin_dirs: Iterable[Path], warnings: list[str]
) -> list[tuple[str, Path]]:
    """(source, folder) of every candidate plugin, highest precedence first."""
    found: list[tuple[str, Path]] = []
    for folder in plugin_dirs:
        folder = Path(folder).resolve()
        if (folder / MANIFEST).is_file():
            found.append(("--plugin-dir", folder))
        elif children := _children_with_manifest(folder):
            found += [("--plugin-dir", child) for child in children]
        else:
            warnings.append(f"--plugin-dir {folder}: no plugin there (no {MANIFEST}); skipped")
    project = repository_root(cwd)
    folders = [("repo", project / PLUGINS_DIR)] if project else []
    for source, parent in [*folders, ("user", agent_home / "plugins")]:
        try:
            children = sorted(parent.iterdir()) if parent.is_dir() else []
        except OSError as exc:
            warnings.append(f"plugins folder {parent}: cannot list ({exc.strerror or exc}); skipped")
            continue
        for child in children:
            if not child.is_dir() or child.name.startswith("."):
                continue
            if (child / MANIFEST).is_file():
                found.append((source, child.resolve()))
            else:
                warnings.append(f"plugin folder {child}: no {MANIFEST}; skipped")
    return found


def _children_with_manifest(folder: Path) -> list[Path]:
    try:
        return [child.resolve() for child in sorted(folder.iterdir()) if (child / MANIFEST).is_file()]
    except OSError:  # not a folder, or unreadable: reported as "no plugin there"
        return []


def read_plugin(manifest: Manifest, source: str, project_dir: Path, warnings: list[str]) -> Plugin:
    root, name = manifest.root.resolve(), manifest.name

    def places(key: str, default: str) -> list[Path]:
        extra = manifest.paths.get(key, ())
        return list(dict.fromkeys([*([root / default] if (root / default).exists() else []), *extra]))

    agent_places = places("agents", "agents")  # folders, or single files as Claude Code accepts
    agent_files = [file for folder in agent_places if folder.is_dir() for file in sorted(folder.glob("*.md"))]
    agent_files += [path for path in agent_places if path.is_file() and path not in agent_files]
    hooks = _hooks(places("hooks", "hooks/hooks.json"), manifest, root, project_dir, warnings)
    return Plugin(
        name=name,
        root=root,
        source=source,
        version=manifest.version,
        description=manifest.description,
        author=manifest.author,
        command_files=_command_files(name, places("commands", "commands"), warnings),
        skills=_skills(name, root, places("skills", "skills"), warnings),
        hooks=hooks,
        agent_files=tuple(agent_files),
        mcp=_mcp(places("mcpServers", ".mcp.json"), manifest, warnings),
    )


def _command_files(plugin: str, places: list[Path], warnings: list[str]) -> tuple[tuple[str, Path], ...]:
    """``commands/git/tidy.md`` is ``plugin:git:tidy``; a name in two places counts once."""
    files: dict[str, Path] = {}
    for place in places:
        for path in sorted(place.rglob("*.md")) if place.is_dir() else [place]:
            parts = [*path.relative_to(place).parent.parts, path.stem] if place.is_dir() else [path.stem]
            if not all(NAME.match(part) for part in parts):
                warnings.append(f"plugin command {path}: its path does not make a command name; skipped")
                continue
            files.setdefault(":".join([plugin, *parts]), path)
    return tuple(files.items())


def _skills(plugin: str, root: Path, places: list[Path], warnings: list[str]) -> tuple[Skill, ...]:
    skills: dict[str, Skill] = {}
    for place in places:
        folders = sorted(place.iterdir()) if place.is_dir() else []
        for skill_file in (folder / SKILL_FILE for folder in folders):
            if not skill_file.is_file():
                continue
            skill, problem = parse_skill(skill_file, f"plugin {plugin}")
            if skill is None:
                warnings.append(f"plugin skill {skill_file}: {problem}; skipped")
                continue
            name = f"{plugin}:{skill.name}"
            skills.setdefault(name, replace(skill, name=name, body=expand_root(skill.body, root)))
    return tuple(skills.values())


def _read_json(path: Path, what: str, warnings: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        warnings.append(f"plugin {what} {path}: cannot read ({exc.strerror or exc}); skipped")
    except (ValueError, UnicodeDecodeError) as exc:
        warnings.append(f"plugin {what} {path}: invalid JSON ({exc}); skipped")
    return None


def _hooks(
    files: list[Path], manifest: Manifest, root: Path, project_dir: Path, warnings: list[str]
) -> tuple[HookSpec, ...]:
    documents = [(path, _read_json(path, "hooks", warnings)) for path in files if path.is_file()]
    if "hooks" in manifest.inline:
        documents.append((manifest.path, manifest.inline["hooks"]))
    specs: list[HookSpec] = []
    for origin, data in documents:
        if data is not None:
            found, problems = parse_plugin_hooks(data, origin, root, project_dir)
            specs += found
            warnings += problems
    return tuple(specs)


def _mcp(files: list[Path], manifest: Manifest, warnings: list[str]) -> tuple[McpConfig, ...]:
    configs: list[McpConfig] = []
    for path in files:
        data = _read_json(path, "MCP configuration", warnings) if path.is_file() else None
        if isinstance(data, dict) and isinstance(data.get("mcpServers", data), dict):
            configs.append(McpConfig(path, data.get("mcpServers", data)))
        elif data is not None:
            warnings.append(f'plugin MCP configuration {path}: expected {{"mcpServers": {{...}}}}; skipped')
    if "mcpServers" in manifest.inline:
        configs.append(McpConfig(manifest.path, manifest.inline["mcpServers"], inline=True))
    return tuple(configs)
