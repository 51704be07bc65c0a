"""The one writer and reader of our registered commands: a guard the harness's shell runs first,
so a missing `lich-hook` shows no error line (the forms: docs/harnesses.md, "The registered command,
per harness"). Ours: what renders back to itself from `parse`, or an older release's plain form."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from lich_hooks.base.homes import CRUSH_MARKS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.base.harnesses import Guard as Guard

CARD: Guard = "card"
SERVER: Guard = "server"
OLD_SERVER: Guard = "server-unmarked"  # read, never written: the Crush guard before MARK
ANSWER: Guard = "answer"
LOGIN: Guard = "login"
POWERSHELL: Guard = "powershell"
# read, never written: the PowerShell form before it passed stdout (its `| Out-Null` dropped the
# person's line with stderr)
OLD_POWERSHELL: Guard = "powershell-muted"
CMD: Guard = "cmd"

EXECUTABLE_NAMES = ("lich-hook", "lich-hook.exe")
LAUNCHER = "plugin/lich-hook"
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]*")
# What a person's line may hold: it passes through sh quoting, JSON, Claude Code's
# backslash rewrite on Windows and cmd.exe's echo unchanged.
_SAFE_MESSAGE = re.compile(r"[A-Za-z0-9 .,:;/()@+=_~<>\[\]#-]*")
_QUIET = "2>/dev/null"
SERVER_HEAD = '[ -z "$LICH_PORT$CRUSH_CLIENT_SERVER" ] ||'
# Crush's guard: the state directory (homes.state_dir's, else no mark is written) and the mark:
# card, conversation, and the crush process whose shell runs the hook ($$).
STATE_WORD = "${LICH_HOOK_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/lich-hooks}"
MARKS = CRUSH_MARKS
MARK = f"{STATE_WORD}/{MARKS}/$LICH_SESSION_ID.$CRUSH_SESSION_ID.$$"
# What PowerShell reads as a single quote (its tokenizer's "IsSingleQuote"): doubled inside one.
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"
_CMD_ESCAPED = "&|<>^"
# a delimiter, an expansion, a quote, and `(`/`)`, which Wine's cmd cannot take in a name
_CMD_UNSAFE = re.compile(r'[\s,;=%!"()]')


@dataclass(eq=False)
class Registered:
    """What one registered command of ours runs: `program` (with `launcher`, the plugin launcher's
    path as written); `guard` None: the plain form; `message`: the line shown if it cannot start."""

    program: str
    event: str
    provider: str | None
    guard: Guard | None = None
    message: str | None = None
    launcher: bool = False

    def argv(self) -> list[str]:
        """`[program, event, provider?]`: what the command hands our program."""
        return [self.program, self.event] + ([self.provider] if self.provider else [])


def system_message(text: str) -> str:
    """The JSON a harness shows a person (`systemMessage`), for a text `safe_message` allows."""
    if not safe_message(text):
        raise ValueError(f"not a registrable message: {text!r}")
    return '{"systemMessage": "' + text + '"}'


def safe_message(text: str) -> bool:
    """Can this text ride in a registered command on every shell and OS unchanged?"""
    return bool(text) and _SAFE_MESSAGE.fullmatch(text) is not None


def cmd_word(program: str) -> str | None:
    """`program` as one word cmd.exe reads back unquoted, or None where none can be written."""
    if not program or _CMD_UNSAFE.search(program):
        return None
    return "".join("^" + c if c in _CMD_ESCAPED else c for c in program)


def launcher_word(variable: str) -> str:
    """A plugin's launcher, run by sh (a copy that lost its mode bits still runs)."""
    return f'sh "${{{variable}}}/{LAUNCHER}"'


def render(
    guard: Guard,
    program: str,
    event: str,
    provider: str,
    message: str | None = None,
    launcher: str | None = None,
) -> str:
    """The command running `program` (`launcher`: the plugin root variable whose launcher runs) for
    `event` under `guard`; `message`: the line shown inside lich when it cannot start."""
    said = system_message(message) if message is not None else None
    if guard in (POWERSHELL, OLD_POWERSHELL):
        quoted = "".join(c * 2 if c in _PS_QUOTES else c for c in program)
        # Only stderr is dropped: merged into the output, the error stream's records are what
        # the filter takes out, and the program's stdout lines (strings) pass. No `2>$null`,
        # no `>file`: where cmd.exe ran it instead, it would create that file in the project.
        keep = _PS_KEEP if guard == POWERSHELL else "Out-Null"
        return f"try {{ & '{quoted}' {event} {provider} 2>&1 | {keep} }} catch {{ }}; exit 0"
    if guard == CMD:
        # `|| …` would leave cmd's exit code at 9009 (tests/windows)
        word = cmd_word(program)
        if word is None:
            raise ValueError(f"cmd.exe cannot run {program!r} unquoted")
        return f"{word} {event} {provider} 2>nul & exit /b 0"
    if guard == LOGIN:
        run = '"$0"' if launcher is None else launcher_word(launcher)
        tail = ' || [ -z "$LICH_PORT" ] || echo "$1"' if said else ""
        script = f"{run} {event} {provider} {_QUIET}{tail}"
        words = [shlex.quote(script), shlex.quote(program) if launcher is None else "sh"]
        if said:
            words.append(shlex.quote(said))
        return "sh -c " + " ".join(words)
    run = shlex.quote(program) if launcher is None else launcher_word(launcher)
    core = f"{run} {event} {provider} {_QUIET}"
    if guard == ANSWER:
        return f"[ -n \"$LICH_PORT\" ] && {core} || printf '{{}}'"
    if guard == SERVER:
        return f'{SERVER_HEAD} [ -e "{MARK}" ] || {core} || :'
    if guard == OLD_SERVER:
        return f"{SERVER_HEAD} {core} || :"
    tail = f"echo {shlex.quote(said)}" if said else ":"
    return f'[ -z "$LICH_PORT" ] || {core} || {tail}'


def parse(command: object) -> Registered | None:
    """What a registered command of ours runs; None when it is not ours."""
    if not isinstance(command, str):
        return None
    return _guarded(command.strip()) or _plain(command.strip())


def _guarded(text: str) -> Registered | None:
    """A guard form, recognised only when it renders back to exactly `text`."""
    for found in _windows(text) + _shell(text):
        if not _plausible(found):
            continue
        assert found.guard is not None
        launcher = _launcher_variable(found.program) if found.launcher else None
        words = (found.program, found.event, found.provider or "", found.message, launcher)
        try:
            again = render(found.guard, *words)
        except ValueError:
            continue
        if again == text:
            return found
    return None


def _split(text: str) -> list[str] | None:
    try:
        return shlex.split(text)
    except ValueError:
        return None


def _message_of(said: str | None) -> str | None:
    prefix, suffix = '{"systemMessage": "', '"}'
    if said is None or not (said.startswith(prefix) and said.endswith(suffix)):
        return None
    return said[len(prefix) : -len(suffix)]


def _shell(text: str) -> list[Registered]:
    """A POSIX or login form's words around `RUN E P 2>/dev/null` (RUN a program or a launcher),
    under each guard that could have written them: `parse` keeps the one that renders back."""
    words = _split(text) or []
    login = words[:2] == ["sh", "-c"] and len(words) in (4, 5)
    core = (_split(words[2]) or []) if login else words
    at = core.index(_QUIET) if _QUIET in core else 0
    if at < 3:
        return []
    program, event, provider = core[at - 3 : at]
    launcher = at > 3 and core[at - 4] == "sh" and program.endswith("/" + LAUNCHER)
    said = words[4] if login and len(words) == 5 else None
    if not login and core[at + 1 : at + 3] == ["||", "echo"] and len(core) == at + 4:
        said = core[at + 3]
    if login and not launcher:
        program = words[3]  # what "$0" stands for
    guards = [LOGIN] if login else [CARD, SERVER, OLD_SERVER, ANSWER]
    return [Registered(program, event, provider, g, _message_of(said), launcher) for g in guards]


_PS_KEEP = "Where-Object { $_ -is [string] }"
_PS_QUOTE = f"[{_PS_QUOTES}]([{_PS_QUOTES}])"
# Each Windows form: its guard, the text around `PROGRAM E P` (PROGRAM's quotes included), and
# how PROGRAM unescapes
_WINDOWS = (
    (CMD, ("", ""), " 2>nul & exit /b 0", r"\^(.)"),
    (POWERSHELL, ("try { & '", "'"), f" 2>&1 | {_PS_KEEP} }} catch {{ }}; exit 0", _PS_QUOTE),
    (OLD_POWERSHELL, ("try { & '", "'"), " 2>&1 | Out-Null } catch { }; exit 0", _PS_QUOTE),
)


def _windows(text: str) -> list[Registered]:
    """A `command_windows` form; `parse` keeps it only where it renders back (so a word cmd.exe
    would split, such as an unescaped `C:\\Users\\AT&T\\…`, is never taken for ours)."""
    found = []
    for guard, (head, close), tail, escape in _WINDOWS:
        if text.startswith(head) and text.endswith(tail) and len(text) >= len(head + tail):
            words = text[len(head) : len(text) - len(tail)].rsplit(" ", 2)
            if len(words) == 3 and all(words[1:]) and words[0].endswith(close):
                program = re.sub(escape, r"\1", words[0][: len(words[0]) - len(close)])
                found.append(Registered(program, words[1], words[2], guard))
    return found


def _launcher_variable(path: str) -> str | None:
    match = re.fullmatch(r"\$\{((?:[A-Z]+_)?PLUGIN_ROOT)\}/" + re.escape(LAUNCHER), path)
    return match[1] if match else None


def _plausible(found: Registered) -> bool:
    if not _words_ok([found.event] + ([found.provider] if found.provider else [])):
        return False
    if found.launcher:
        return _launcher_variable(found.program) is not None
    return _program_ok(found.program)


def _words_ok(words: list[str]) -> bool:
    return all(_WORD.fullmatch(word) for word in words) and words[0] != "status-line"


def _program_ok(program: str) -> bool:
    name = program.replace("\\", "/").rsplit("/", 1)[-1]
    return name in EXECUTABLE_NAMES


def _plain(text: str) -> Registered | None:
    """The plain `<…/lich-hook> <event> [<provider>]`, or an older plugin's `sh "${ROOT}/…"`."""
    argv = _split(text)
    if argv is None or (argv and argv[0].startswith("\\")) or re.match(r'"?[A-Za-z]:\\', text):
        argv = _split_windows(text)
    if argv is None:
        return None
    launcher = len(argv) in (3, 4) and argv[0] == "sh" and argv[1].endswith("/" + LAUNCHER)
    if launcher:
        argv = argv[1:]
        if _launcher_variable(argv[0]) is None:
            return None
    elif len(argv) not in (2, 3) or not _program_ok(argv[0]):
        return None
    if not _words_ok(argv[1:]):
        return None
    return Registered(argv[0], argv[1], argv[2] if len(argv) == 3 else None, None, None, launcher)


def _split_windows(text: str) -> list[str] | None:
    """The words of a command cmd.exe would read: a double-quoted first word, then spaces."""
    if text.startswith('"'):
        end = text.find('"', 1)
        if end < 0:
            return None
        return [text[1:end], *text[end + 1 :].split()]
    return text.split()
