"""Skills: folders holding a ``SKILL.md`` (YAML front matter, then instructions).

The model sees only a list of names, descriptions and paths, budgeted to about 2% of the context
window, and reads a body when it needs one. A user message that mentions ``$name`` gets that
skill's body injected for the turn. Invalid skills become warnings, never errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from agent_cli.context.fragments import SKILLS_LIST, skill_body_text
from agent_cli.context.project_doc import repository_root
from agent_cli.context.prompts import PromptLibrary, prompt_library
from agent_cli.context.tokens import approx_text_tokens as approx_tokens
from agent_cli.paths import bundled_skills_dir

SKILL_FILE = "SKILL.md"
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
BUDGET_FRACTION = 0.02
MIN_DESCRIPTION_CHARS = 40  # shorter than this a description stops helping; drop it instead
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path  # the SKILL.md file
    body: str  # the instructions after the front matter
    source: str  # "repo", "user" or "bundled"


@dataclass(frozen=True, slots=True)
class SkillSet:
    skills: tuple[Skill, ...]
    warnings: tuple[str, ...]

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)


def skill_roots(cwd: Path, agent_home: Path) -> list[tuple[str, Path]]:
    """Where skills are looked for, highest precedence first."""
    project = repository_root(cwd)
    repo = [("repo", project / ".agent" / "skills")] if project else []
    return [*repo, ("user", Path(agent_home) / "skills"), ("bundled", bundled_skills_dir())]


def load_skills(
    roots: Iterable[tuple[str, Path]], extra: Iterable[Skill] = (), hidden: Callable[[Path], object] | None = None
) -> SkillSet:
    """Every valid skill under ``roots`` (one folder level deep), then ``extra`` (plugins'
    skills, already namespaced); the first of a name wins. A SKILL.md that a Read deny rule hides
    (``hidden`` names the rule; the file or what it links to), or a repository's that links outside
    the repository, is skipped."""
    skills: dict[str, Skill] = {}
    warnings: list[str] = []
    for source, root in roots:
        if not root.is_dir():
            continue
        try:
            folders = sorted(root.iterdir())  # sorted: the list must be byte-stable
        except OSError as exc:
            warnings.append(f"skills folder {root}: cannot list ({exc.strerror or exc}); skipped")
            continue
        seen_here: set[str] = set()
        for folder in folders:
            skill_file = folder / SKILL_FILE
            if not folder.is_dir() or not skill_file.is_file():
                continue
            project = root.parent.parent.resolve()  # <repo>/.agent/skills
            if source == "repo" and not skill_file.resolve().is_relative_to(project):
                warnings.append(f"skill {skill_file}: it leads outside the repository; skipped")
                continue
            if hidden is not None and (rule := hidden(skill_file.absolute()) or hidden(skill_file.resolve())):
                warnings.append(f"skill {skill_file}: the permission rule `{rule}` hides it; skipped")
                continue
            skill, problem = parse_skill(skill_file, source)
            if skill is None:
                warnings.append(f"skill {skill_file}: {problem}; skipped")
                continue
            if skill.name in seen_here:
                warnings.append(f"skill {skill_file}: another skill in {root} is also named {skill.name!r}; skipped")
                continue
            seen_here.add(skill.name)
            skills.setdefault(skill.name, skill)  # a higher-precedence root already won
    for skill in extra:
        skills.setdefault(skill.name, skill)
    return SkillSet(tuple(skills.values()), tuple(warnings))


def read_front_matter(path: Path) -> tuple[dict | None, str, str]:
    """(front matter, body, "") of a markdown file, or (None, "", why it cannot be used)."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError as exc:
        return None, "", f"cannot read ({exc.strerror or exc})"
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, "", "missing YAML front matter (the file must start with a '---' line and close it with another)"
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        return None, "", f"invalid YAML front matter: {' '.join(str(exc).split())}"
    if not isinstance(meta, dict):
        return None, "", "front matter must be a mapping with `name` and `description`"
    return meta, text[match.end() :].strip(), ""


def parse_skill(path: Path, source: str = "repo") -> tuple[Skill | None, str]:
    """(skill, "") or (None, why it is invalid)."""
    meta, body, problem = read_front_matter(path)
    if meta is None:
        return None, problem
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name.strip():
        return None, "front matter needs a `name` string"
    if not isinstance(description, str) or not description.strip():
        return None, "front matter needs a `description` string"
    name, description = name.strip(), " ".join(description.split())
    if len(name) > MAX_NAME_CHARS or "\n" in name:
        return None, f"`name` must be one line of at most {MAX_NAME_CHARS} characters"
    if len(description) > MAX_DESCRIPTION_CHARS:
        return None, f"`description` is {len(description)} characters; the limit is {MAX_DESCRIPTION_CHARS}"
    return Skill(name, description, path, body, source), ""


def render_skills_list(
    skills: Sequence[Skill], context_window: int, library: PromptLibrary | None = None
) -> tuple[str | None, list[str]]:
    """The ``<skills>`` fragment within ~2% of ``context_window`` tokens, and warnings for the user.

    Over budget, descriptions are shortened evenly, then dropped, then whole entries are left out
    from the end (bundled skills come last); the fragment says so either way.
    """
    if not skills:
        return None, []
    intro = (library or prompt_library()).render("skills_intro.md").strip()
    budget = max(1, int(context_window * BUDGET_FRACTION))

    def build(entries: Sequence[Skill], limit: int | None, note: str = "") -> str:
        lines = [intro, ""] + [_entry(skill, limit) for skill in entries]
        if note:
            lines += ["", note]
        return SKILLS_LIST.wrap("\n".join(lines))

    full = build(skills, None)
    if approx_tokens(full) <= budget:
        return full, []
    shortened_note = "(Descriptions are shortened to fit the context budget; each SKILL.md has the full text.)"
    longest = max(len(skill.description) for skill in skills)
    low, high = MIN_DESCRIPTION_CHARS, longest
    if approx_tokens(build(skills, low, shortened_note)) <= budget:
        while low < high:  # the longest description limit that fits
            mid = (low + high + 1) // 2
            if approx_tokens(build(skills, mid, shortened_note)) <= budget:
                low = mid
            else:
                high = mid - 1
        warning = f"skills list shortened to fit {budget} tokens (2% of the context window): descriptions cut to {low} characters"
        return build(skills, low, shortened_note), [warning]
    names_note = "(Descriptions are left out to fit the context budget; read a SKILL.md to see what it does.)"
    if approx_tokens(build(skills, 0, names_note)) <= budget:
        warning = f"skills list shortened to fit {budget} tokens (2% of the context window): descriptions left out"
        return build(skills, 0, names_note), [warning]
    kept = len(skills)
    while kept > 0:
        kept -= 1
        note = f"({len(skills) - kept} more skills are not listed to fit the context budget.)"
        text = build(skills[:kept], 0, note)
        if approx_tokens(text) <= budget:
            break
    omitted = ", ".join(skill.name for skill in skills[kept:])
    warning = f"skills list over its budget of {budget} tokens (2% of the context window); not listed: {omitted}"
    return text, [warning]


def _entry(skill: Skill, limit: int | None) -> str:
    description = skill.description
    if limit == 0:
        return f"- {skill.name} ({skill.path})"
    if limit is not None and len(description) > limit:
        description = description[: max(0, limit - 1)].rstrip() + "…"
    return f"- {skill.name}: {description} ({skill.path})"


def mentioned_skills(text: str, skills: Iterable[Skill]) -> list[Skill]:
    """Skills named as ``$name`` in ``text``, in order of first mention."""
    hits: list[tuple[int, Skill]] = []
    for skill in skills:
        match = re.search(rf"(?<![\w$])\${re.escape(skill.name)}(?![\w-])", text)
        if match:
            hits.append((match.start(), skill))
    return [skill for _, skill in sorted(hits, key=lambda hit: hit[0])]


def skill_injections(text: str, skills: Iterable[Skill]) -> list[str]:
    """A ``<skill>`` fragment with the body of every skill ``text`` mentions as ``$name``."""
    return [skill_body_text(skill.name, skill.path, skill.body) for skill in mentioned_skills(text, skills)]
