"""The evidence ladder (docs/worker-answer.md), step by step, on environments and fake /proc trees.

A fake /proc lets these tests build the process shapes a real machine rarely
has (deep chains, loops, names with spaces and parentheses, vanished
processes); tests/interactive/test_real_parents.py runs real processes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lich_hooks.hook import interactive
from lich_hooks.hook.interactive import check, is_claude, prints

TTY = "/dev/pts/3"


class FakeProc:
    """A /proc tree: pid -> (comm, ppid, argv, stdin target)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def add(
        self, pid: int, ppid: int, argv: list[str], stdin: str | None = TTY, comm: str = "x"
    ) -> FakeProc:
        entry = self.root / str(pid)
        (entry / "fd").mkdir(parents=True)
        (entry / "cmdline").write_bytes(b"".join(a.encode() + b"\0" for a in argv))
        (entry / "stat").write_text(f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 0\n")
        if stdin is not None:
            (entry / "fd" / "0").symlink_to(stdin)
        return self


def chain(tmp: Path, claude_argv: list[str], stdin: str | None = TTY) -> FakeProc:
    """hook (30) <- sh -c (20) <- claude (10) <- login shell (5) <- init (1)."""
    proc = FakeProc(tmp / "proc")
    proc.add(5, 1, ["-bash"])
    proc.add(10, 5, claude_argv, stdin)
    proc.add(20, 10, ["/bin/sh", "-c", "lich-hook Stop claude"], "pipe:[1]")
    proc.add(30, 20, ["/usr/bin/python3", "/usr/bin/lich-hook", "Stop", "claude"], "pipe:[1]")
    return proc


def decide(proc: FakeProc, environ: dict[str, str] | None = None, start: int = 20) -> bool:
    return check(environ or {}, str(proc.root), start).interactive


# -- step 1 and 2: the environment --------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("0", False)])
def test_attended_decides_over_everything(tmp_path: Path, value: str, expected: bool) -> None:
    # Even a claude ancestor with -p and an sdk entrypoint lose to the variable.
    proc = chain(tmp_path, ["claude", "-p"], stdin="pipe:[9]")
    environ = {"CLAUDE_CODE_SESSION_ATTENDED": value, "CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
    evidence = check(environ, str(proc.root), 20)
    assert evidence.interactive is expected
    assert evidence.why == f"CLAUDE_CODE_SESSION_ATTENDED={value}"


@pytest.mark.parametrize("value", ["", "true", "yes", "2", " 1", "01", "-1"])
def test_other_attended_values_are_not_evidence(tmp_path: Path, value: str) -> None:
    """Only the two values Claude Code writes decide; anything else falls through."""
    environ = {"CLAUDE_CODE_SESSION_ATTENDED": value}
    assert decide(chain(tmp_path, ["claude"]), environ) is True
    assert decide(chain(tmp_path / "p", ["claude", "-p"]), environ) is False


@pytest.mark.parametrize("entrypoint", ["sdk-cli", "sdk-ts", "sdk-py", "sdk"])
def test_sdk_entrypoint_is_not_interactive(tmp_path: Path, entrypoint: str) -> None:
    evidence = check(
        {"CLAUDE_CODE_ENTRYPOINT": entrypoint}, str(chain(tmp_path, ["claude"]).root), 20
    )
    assert (evidence.interactive, evidence.why) == (False, f"CLAUDE_CODE_ENTRYPOINT={entrypoint}")


@pytest.mark.parametrize("entrypoint", ["cli", "claude-vscode", "", "mcp", "SDK-cli"])
def test_other_entrypoints_fall_through(tmp_path: Path, entrypoint: str) -> None:
    environ = {"CLAUDE_CODE_ENTRYPOINT": entrypoint}
    assert decide(chain(tmp_path, ["claude"]), environ) is True
    assert decide(chain(tmp_path / "p", ["claude", "--print"]), environ) is False


# -- step 3: the claude ancestor ------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["claude", "-p", "fix it"],
        ["claude", "fix it", "-p"],
        ["claude", "--model", "opus", "--print"],
        ["claude", "--print=text"],
        ["claude", "-cp", "go on"],
        ["/usr/bin/node", "/usr/local/bin/claude", "-p"],
        ["node", "/home/u/.npm-global/lib/node_modules/@anthropic-ai/claude-code/cli.js", "-p"],
        ["/home/u/.local/bin/claude", "--output-format", "json", "-p", "x"],
    ],
)
def test_print_flag_anywhere_is_not_interactive(tmp_path: Path, argv: list[str]) -> None:
    evidence = check({}, str(chain(tmp_path, argv).root), 20)
    assert evidence.interactive is False
    assert "-p/--print" in evidence.why


@pytest.mark.parametrize(
    "argv",
    [
        ["claude"],
        ["claude", "--resume", "abc"],
        ["claude", "explain -p"],  # a prompt that mentions the flag is one argument
        ["claude", "--", "-p"],  # after `--`, "-p" is the prompt
        ["claude", "--permission-mode", "plan"],
    ],
)
def test_no_print_flag_and_a_terminal_is_interactive(tmp_path: Path, argv: list[str]) -> None:
    evidence = check({}, str(chain(tmp_path, argv).root), 20)
    assert evidence.interactive is True
    assert evidence.why == "claude process 10: no -p, terminal on stdin"


@pytest.mark.parametrize("target", ["pipe:[123]", "/dev/null", "socket:[9]", "/tmp/input.txt"])
def test_stdin_not_a_terminal_is_not_interactive(tmp_path: Path, target: str) -> None:
    evidence = check({}, str(chain(tmp_path, ["claude"], stdin=target).root), 20)
    assert evidence.interactive is False
    assert target in evidence.why


@pytest.mark.parametrize("target", ["/dev/pts/0", "/dev/tty1", "/dev/ttyS0", "/dev/console"])
def test_terminals_count_as_terminals(tmp_path: Path, target: str) -> None:
    assert decide(chain(tmp_path, ["claude"], stdin=target)) is True


def test_unreadable_stdin_is_no_evidence(tmp_path: Path) -> None:
    evidence = check({}, str(chain(tmp_path, ["claude"], stdin=None).root), 20)
    assert evidence.interactive is True
    assert "stdin unreadable" in evidence.why


def test_no_claude_ancestor_defaults_to_interactive(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(10, 1, ["tmux"], stdin="/dev/null")
    proc.add(20, 10, ["/bin/sh", "-c", "lich-hook Stop"], stdin="pipe:[1]")
    evidence = check({}, str(proc.root), 20)
    assert (evidence.interactive, evidence.why) == (
        True,
        "no evidence (no claude process among the ancestors)",
    )


def test_no_proc_defaults_to_interactive(tmp_path: Path) -> None:
    """macOS and Windows have no /proc: without the variables there is no evidence."""
    evidence = check({}, str(tmp_path / "no-proc"), 20)
    assert evidence.interactive is True
    assert "no " in evidence.why and "no-proc" in evidence.why


def test_the_nearest_claude_decides(tmp_path: Path) -> None:
    """`claude -p` run by a tool of an interactive claude: the inner one is ours."""
    proc = FakeProc(tmp_path / "proc")
    proc.add(10, 1, ["claude"], stdin=TTY)  # the interactive worker
    proc.add(20, 10, ["/bin/bash", "-c", "claude -p 'summarise'"], stdin="pipe:[1]")
    proc.add(30, 20, ["claude", "-p", "summarise"], stdin="pipe:[2]")
    proc.add(40, 30, ["/bin/sh", "-c", "lich-hook Stop claude"], stdin="pipe:[3]")
    assert decide(proc, start=40) is False
    assert decide(proc, start=20) is True  # the outer claude's own hook


def test_claude_pid_names_a_claude_with_another_name(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(10, 1, ["/opt/claude-code/bin/cc-2.1.99", "-p"], stdin=TTY)
    proc.add(20, 10, ["/bin/sh", "-c", "lich-hook Stop"], stdin="pipe:[1]")
    assert decide(proc) is True  # no name matches: no evidence
    evidence = check({"CLAUDE_PID": "10"}, str(proc.root), 20)
    assert (evidence.interactive, evidence.why) == (False, "claude process 10 runs with -p/--print")


def test_claude_pid_that_is_not_an_ancestor_is_ignored(tmp_path: Path) -> None:
    """A CLAUDE_PID inherited from some other claude says nothing about ours."""
    proc = chain(tmp_path, ["claude"])  # ours: interactive
    proc.add(99, 1, ["claude", "-p"], stdin="pipe:[7]")  # a stranger
    assert decide(proc, {"CLAUDE_PID": "99"}) is True


@pytest.mark.parametrize("value", ["", "abc", "-10", "10 ", "１０"])
def test_malformed_claude_pid_is_ignored(tmp_path: Path, value: str) -> None:
    proc = chain(tmp_path, ["claude", "-p"])
    assert decide(proc, {"CLAUDE_PID": value}) is False  # found by name instead


def test_stat_with_spaces_and_parens_in_the_name(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(10, 1, ["claude", "-p"], stdin="pipe:[1]")
    proc.add(20, 10, ["weird"], comm="a) b (c")
    assert decide(proc) is False


def test_a_vanished_ancestor_ends_the_walk(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(20, 15, ["/bin/sh"])  # 15 has exited
    assert decide(proc) is True


def test_a_parent_loop_ends_the_walk(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(20, 21, ["/bin/sh"])
    proc.add(21, 20, ["/bin/sh"])
    proc.add(22, 22, ["/bin/sh"])
    assert decide(proc) is True
    assert decide(proc, start=22) is True


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(2, 1, ["claude", "-p"], stdin="pipe:[1]")
    depth = interactive.MAX_ANCESTORS + 5
    for pid in range(3, 3 + depth):
        proc.add(pid, pid - 1, ["sh"])
    assert decide(proc, start=2 + depth) is True  # too deep: no evidence
    assert decide(proc, start=10) is False


def test_a_corrupt_stat_ends_the_walk(tmp_path: Path) -> None:
    proc = FakeProc(tmp_path / "proc")
    proc.add(10, 1, ["claude", "-p"], stdin="pipe:[1]")
    proc.add(20, 10, ["sh"])
    (proc.root / "20" / "stat").write_text("garbage")
    assert decide(proc) is True


# -- the pure parts -----------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["claude"],
        ["/usr/local/bin/claude"],
        ["C:\\Program Files\\Claude\\claude.exe"],
        ["node", "/usr/local/bin/claude"],
        ["/usr/bin/node20", "--no-warnings", "/x/claude", "-p"],
        ["nodejs", "/x/claude.mjs"],
        ["bun", "/x/claude"],
        ["deno", "/x/claude"],
        ["python3", "/tmp/x/claude"],
        ["/usr/bin/python3.11", "-u", "/tmp/x/claude", "-p"],
        ["node", "/lib/node_modules/@anthropic-ai/claude-code/cli.js"],
        ["/home/u/.local/share/claude/versions/2.1.328", "--resume"],
        ["bun", "run", "/x/claude"],
        ["deno", "run", "-A", "/x/claude"],
    ],
)
def test_is_claude(argv: list[str]) -> None:
    assert is_claude(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["claude-helper"],
        ["node", "/x/server.js", "claude"],  # claude is an argument, not the script
        ["sh", "/x/claude"],  # a shell script named claude is a shell running a script
        ["vim", "claude"],
        ["node"],
        ["node", "--inspect"],
        ["python3", "-c", "print('claude')"],
        ["/home/u/.local/share/claude/versions"],
        ["bun", "run", "build"],
    ],
)
def test_is_not_claude(argv: list[str]) -> None:
    assert not is_claude(argv)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["claude", "-p"], True),
        (["claude", "--print"], True),
        (["claude", "--print=json"], True),
        (["claude", "-pc"], True),
        (["-p"], False),  # argv[0] is the program, not a flag
        (["claude", "-P"], False),
        (["claude", "--printer"], False),
        (["claude", "--", "-p"], False),
        (["claude", "-x", "-p"], True),
    ],
)
def test_prints(argv: list[str], expected: bool) -> None:
    assert prints(argv) is expected
