"""The sandbox's domain lists (agent_cli/network/): Claude Code's entries read unchanged, our
[sandbox.network] table, WebFetch(domain:…) rules, trust, and what an entry matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.config import ConfigError, load_config
from agent_cli.network.domains import DomainError, normalize_host, parse_entry
from agent_cli.network.gate import NetworkGate
from agent_cli.network.lists import NetworkLists, read_lists
from agent_cli.permissions.engine import Permissions
from agent_cli.trust.inventory import take_inventory
from tests.conftest import git_init
from tests.waiting import until


def entry(text: str):
    return parse_entry(text, "test")


@pytest.mark.parametrize(
    ("pattern", "host", "port", "matches"),
    [
        ("example.com", "example.com", 443, True),
        ("example.com", "www.example.com", 443, False),
        ("*.example.com", "www.example.com", 443, True),
        ("*.example.com", "a.b.example.com", 80, True),
        ("*.example.com", "example.com", 443, False),  # the apex is not below itself
        ("*.example.com", "evilexample.com", 443, False),
        ("example.com:8080", "example.com", 8080, True),
        ("example.com:8080", "example.com", 443, False),
        ("*.example.com:443", "api.example.com", 443, True),
        ("[::1]:8080", "::1", 8080, True),
        ("10.0.0.5", "10.0.0.5", 22, True),
        ("EXAMPLE.com.", "example.com", 443, True),
    ],
)
def test_an_entry_matches_its_names_and_port(pattern, host, port, matches):
    assert entry(pattern).matches(normalize_host(host), port) is matches


def test_names_are_compared_as_dns_sees_them():
    """A trailing dot, upper case or a Unicode spelling cannot slip past a denied entry."""
    denied = entry("evil.example.com")
    for spelling in ("EVIL.example.com.", "evil.EXAMPLE.COM"):
        assert denied.matches(normalize_host(spelling), 443)
    assert normalize_host("bücher.example") == "xn--bcher-kva.example"
    assert entry("bücher.example").matches(normalize_host("xn--bcher-kva.example"), 80)


@pytest.mark.parametrize(
    "spelling", ["2130706433", "127.1", "0x7f.0.0.1", "0177.0.0.1", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "127.0.0.1."]
)
def test_an_address_is_compared_in_one_form_whatever_its_spelling(spelling):
    """The resolver reads all of these as 127.0.0.1 (the kernel connects ::ffff:… as IPv4): a denied
    address must not be reached, nor asked about, by another spelling of it."""
    assert normalize_host(spelling) == "127.0.0.1"
    assert entry("127.0.0.1").matches(normalize_host(spelling), 80)
    assert (
        entry(f"[{spelling}]" if ":" in spelling and not spelling.startswith("[") else spelling).pattern == "127.0.0.1"
    )


@pytest.mark.parametrize("bad", ["*", "*.com:99999", "foo.*.com", "https://example.com/x", "a b.com", "*.10.0.0.1", ""])
def test_what_is_not_a_domain_pattern_is_refused(bad):
    with pytest.raises(DomainError):
        entry(bad)


def lists_for(config, trusted: bool = True):
    permissions = Permissions.from_config(config, trusted=trusted)
    root = config.cwd
    return read_lists(config.layers, root, permissions.rules, trusted, config.claude_settings)


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_every_source_is_read_with_where_it_is_written(tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    write_json(
        Path.home() / ".claude" / "settings.json",
        {
            "sandbox": {"network": {"allowedDomains": ["pypi.org"], "deniedDomains": ["evil.test"]}},
            "permissions": {"allow": ["WebFetch(domain:docs.python.org)"], "deny": ["WebFetch(domain:*.bad.test)"]},
        },
    )
    (isolated_home / "config.toml").write_text('[sandbox.network]\nallowed_domains = ["*.npmjs.org"]\n')
    write_json(repo / ".claude" / "settings.json", {"sandbox": {"network": {"allowedDomains": ["crates.io"]}}})
    write_json(repo / ".claude" / "settings.local.json", {"sandbox": {"network": {"deniedDomains": ["x.test"]}}})
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[sandbox.network]\nallowed_domains = ["github.com:443"]\n')
    config = load_config(repo, ['sandbox.network.denied_domains=["y.test"]'])
    lists = lists_for(config)
    allowed = {e.text: e.source for e in lists.allowed}
    denied = {e.text: e.source for e in lists.denied}
    home = str(Path.home())
    assert allowed == {
        "pypi.org": f"{home}/.claude/settings.json allowedDomains",
        "*.npmjs.org": f"{isolated_home}/config.toml allowed_domains",
        "crates.io": f"{repo}/.claude/settings.json allowedDomains",
        "github.com:443": f"{repo}/.agent/config.toml allowed_domains",
        "docs.python.org": f"WebFetch(domain:docs.python.org) in {home}/.claude/settings.json",
    }
    assert denied == {
        "evil.test": f"{home}/.claude/settings.json deniedDomains",
        "x.test": f"{repo}/.claude/settings.local.json deniedDomains",
        "y.test": '-c sandbox.network.denied_domains=["y.test"] denied_domains',
        "*.bad.test": f"WebFetch(domain:*.bad.test) in {home}/.claude/settings.json",
    }


def test_an_untrusted_repository_denies_at_once_but_allows_nothing(tmp_path):
    repo = git_init(tmp_path / "repo")
    write_json(
        repo / ".claude" / "settings.json",
        {
            "sandbox": {"network": {"allowedDomains": ["exfil.test"], "deniedDomains": ["evil.test"]}},
            "permissions": {"allow": ["WebFetch(domain:also.test)"]},
        },
    )
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text(
        '[sandbox.network]\nallowed_domains = ["more.test"]\nhosts = { "pypi.org" = "10.0.0.1" }\n'
    )
    lists = lists_for(load_config(repo), trusted=False)
    assert [e.text for e in lists.allowed] == []
    assert sorted(e.text for e in lists.waiting) == ["also.test", "exfil.test", "more.test"]
    assert [e.text for e in lists.denied] == ["evil.test"]
    assert lists.hosts == {}  # a repository never maps names, trusted or not
    trusted = lists_for(load_config(repo), trusted=True)
    assert sorted(e.text for e in trusted.allowed) == ["also.test", "exfil.test", "more.test"]
    assert trusted.hosts == {}
    kinds = [(item.kind, item.name) for item in take_inventory(load_config(repo)).items]
    assert ("allowed domain", "exfil.test") in kinds and ("allowed domain", "more.test") in kinds


def test_a_denied_domain_wins_over_an_allowed_wildcard(tmp_path):
    config = load_config(
        tmp_path,
        [
            'sandbox.network.allowed_domains=["*.example.com", "api.example.com"]',
            'sandbox.network.denied_domains=["evil.example.com"]',
        ],
    )
    gate = NetworkGate(lists_for(config))
    assert gate.verdict("evil.example.com", 443).allowed is False
    assert "denied by evil.example.com" in gate.verdict("evil.example.com", 443).by
    wildcard = gate.verdict("www.example.com", 443)
    assert wildcard.allowed and not wildcard.exact
    exact = gate.verdict("api.example.com", 443)
    assert exact.allowed and exact.exact  # named exactly: it may resolve to a private address
    assert gate.verdict("example.org", 443).undecided


def test_hosts_come_from_the_users_settings(tmp_path, isolated_home):
    (isolated_home / "config.toml").write_text('[sandbox.network]\nhosts = { "PyPI.test" = "127.0.0.1" }\n')
    lists = lists_for(load_config(tmp_path, ['sandbox.network.hosts={"b.test" = "::1"}']))
    assert lists.hosts == {"pypi.test": "127.0.0.1", "b.test": "::1"}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ('sandbox.network.allowed_domains=["*"]', "sandbox.network.allowed_domains"),
        ('sandbox.network.allowed_domain=["x.com"]', "unknown key `sandbox.network.allowed_domain`"),
        ("sandbox.network.denied_domains=3", "must be an array"),
        ('sandbox.network.hosts={"x.test" = "nowhere"}', "not a name and an address"),
        ("sandbox.proxy=1", "unknown key `sandbox.proxy`"),
    ],
)
def test_a_bad_network_table_is_an_error_naming_the_key(tmp_path, override, message):
    with pytest.raises(ConfigError, match=message.replace("*", r"\*").replace("[", r"\[")):
        load_config(tmp_path, [override])


def test_a_bad_claude_entry_is_a_warning_not_an_error(tmp_path):
    write_json(
        Path.home() / ".claude" / "settings.json", {"sandbox": {"network": {"allowedDomains": ["ok.test", "*"]}}}
    )
    lists = lists_for(load_config(tmp_path))
    assert [e.text for e in lists.allowed] == ["ok.test"]
    assert any("'*'" in warning for warning in lists.warnings)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "::ffff:127.0.0.1", "fd00::1"])
def test_a_private_address_needs_a_name_listed_exactly(address):
    from agent_cli.network.connect import Unreachable, check_addresses

    with pytest.raises(Unreachable, match="loopback, private or link-local") as refused:
        check_addresses("x.example.com", ["93.184.216.34", address], exact=False)
    assert refused.value.refused
    check_addresses("x.example.com", [address], exact=True)
    check_addresses("x.example.com", ["93.184.216.34"], exact=False)


async def test_a_question_ends_with_the_command_that_waits_on_it():
    """A command stopped (or timed out) while its question is up: the question is withdrawn, the
    request refused, and the next command's request for the host is asked again."""
    import asyncio

    from agent_cli.network.gate import ONCE

    asked: list[str] = []
    answers: asyncio.Queue[str] = asyncio.Queue()

    async def question(host, port, watch):
        asked.append(host)
        return await answers.get()

    gate = NetworkGate(NetworkLists(), question)
    with gate.watch("call_1", lambda event: None):
        pending = asyncio.ensure_future(gate.ask("x.test", 443))
        await until(lambda: asked, within=5, what="the question")
        assert asked == ["x.test"] and not pending.done()
    # the command is over: its question goes with it
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert gate.verdict("x.test", 443).undecided
    with gate.watch("call_2", lambda event: None):
        again = asyncio.ensure_future(gate.ask("x.test", 443))
        answers.put_nowait(ONCE)
        assert (await again).allowed
    assert asked == ["x.test", "x.test"]


@pytest.mark.parametrize("host", ["169.254.169.254", "127.0.0.1", "10.1.2.3", "::1", "localhost", "db.localhost"])
async def test_a_private_address_or_localhost_is_refused_without_a_question(host):
    """Asked, "Yes, and don't ask again" saved an entry naming it exactly, which opens a private
    address to every later session (the cloud's metadata service, the agent's own servers)."""
    from agent_cli.network.gate import ALWAYS

    asked: list[str] = []

    async def question(host, port, watch):
        asked.append(host)
        return ALWAYS

    gate = NetworkGate(NetworkLists(), question)
    with gate.watch("call_1", lambda event: None):
        verdict = await gate.ask(normalize_host(host), 80)
        assert not verdict.allowed and "only an entry naming it exactly" in verdict.by
        assert (await gate.ask("public.example", 80)).allowed  # a name is still asked about
    assert asked == ["public.example"]
