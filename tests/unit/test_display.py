from pathlib import Path

from agent_cli.display import home_relative, human_size, short_path


def test_home_relative():
    home = Path.home()
    assert home_relative(home) == "~"
    assert home_relative(home / "src" / "app") == "~/src/app"
    assert home_relative(str(home) + "-other/x") == str(home) + "-other/x"  # a sibling, not inside home
    assert home_relative("/etc/hosts") == "/etc/hosts"


def test_short_path_cuts_from_the_left():
    assert short_path("/a/very/long/path/to/some/project", 12) == "…ome/project"
    assert short_path("/tmp", 12) == "/tmp"


def test_human_size():
    assert [human_size(n) for n in (0, 1023, 1024, 15 * 1024, 3 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.0 KB",
        "15 KB",
        "3.0 GB",
    ]


def test_command_output_drops_only_a_shell_header():
    from agent_cli.display import command_output

    assert command_output("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nhello\n") == "hello\n"
    assert command_output("notes\nOutput:\nkept whole\n") == "notes\nOutput:\nkept whole\n"
