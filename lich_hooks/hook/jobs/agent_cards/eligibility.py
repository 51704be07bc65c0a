"""Which Agent calls become lich cards: docs/agent-cards.md's table, in its order, as one pure
function; the costly probes run only when a row needs them."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Literal

    from lich_hooks.base.lichenv import LichEnv

    DecisionKind = Literal["native", "toast", "take"]

AGENT_TOOLS = ("Agent", "Task")
STOP_TOOL = "TaskStop"
# Claude Code 2.1.3xx lists `claude` as "the default when no agent name is typed".
GENERAL_TYPES = ("general-purpose", "claude")
PROMPT_LIMIT = 8192  # UTF-8 bytes; lich refuses a longer task
AGENT_TEAMS_VAR = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"
TRUTHY = ("1", "true", "yes", "on")
WORKER_BRANCH_PREFIX = "subagent/"

NATIVE: DecisionKind = "native"
TOAST: DecisionKind = "toast"
TAKE: DecisionKind = "take"


class Call:
    """What a taken call asks for, already validated."""

    __slots__ = ("cwd", "description", "isolated", "model", "prompt", "tool_use_id")

    def __init__(
        self,
        prompt: str,
        description: str,
        model: str | None,
        isolated: bool,
        tool_use_id: str | None,
        cwd: str | None,
    ) -> None:
        self.prompt = prompt
        self.description = description
        self.model = model
        self.isolated = isolated
        self.tool_use_id = tool_use_id
        self.cwd = cwd


class Decision:
    """native / toast / take, why (a word for the log), and the toast's reason."""

    __slots__ = ("args", "call", "kind", "reason", "why")

    def __init__(
        self,
        kind: DecisionKind,
        reason: str,
        call: Call | None = None,
        why: str | None = None,
        args: dict[str, object] | None = None,
    ) -> None:
        self.kind = kind
        self.reason = reason
        self.call = call
        self.why = why  # catalog key of the toast's reason
        self.args = args or {}


class Probes:
    def __init__(
        self,
        interactive: Callable[[], bool],
        bin_runnable: Callable[[], bool],
        current_branch: Callable[[], str | None],
    ) -> None:
        self._interactive = interactive
        self._bin_runnable = bin_runnable
        self._current_branch = current_branch
        self.ran: list[str] = []
        self._branch: tuple[str | None] | None = None

    def interactive(self) -> bool:
        self.ran.append("interactive")
        return self._interactive()

    def bin_runnable(self) -> bool:
        self.ran.append("bin")
        return self._bin_runnable()

    def branch(self) -> str | None:
        if self._branch is None:
            self.ran.append("branch")
            self._branch = (self._current_branch(),)
        return self._branch[0]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def agent_teams_on(environ: Mapping[str, str]) -> bool:
    """Claude Code's own truthiness rule; it exports its settings' `env` to hooks."""
    return environ.get(AGENT_TEAMS_VAR, "").strip().lower() in TRUTHY


def decide(
    data: dict[str, object], env: LichEnv, probes: Probes, agent_teams: bool = False
) -> Decision:
    """docs/agent-cards.md for an `Agent`/`Task` PreToolUse; `agent_teams`: agent_teams_on()."""
    # 1. the main loop only: a subagent's own subagents stay inside Claude Code
    if "agent_id" in data and data.get("agent_id") not in (None, ""):
        return Decision(NATIVE, "subagent-call")
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        return Decision(NATIVE, "no-tool-input")
    # 2. only the catch-all type: Explore, Plan and plugin types keep their behaviour
    agent_type = tool_input.get("subagent_type")
    if agent_type not in (None, "", *GENERAL_TYPES):
        return Decision(NATIVE, "agent-type")
    # 3. teammates and remote agents keep Claude Code's route; with agent teams on, a call with a
    # `name` starts a teammate (2.1.3xx ignores `team_name`; docs/harnesses.md)
    if agent_teams and tool_input.get("name") not in (None, ""):
        return Decision(NATIVE, "teammate")
    if tool_input.get("team_name") not in (None, ""):
        return Decision(NATIVE, "team")
    isolation = tool_input.get("isolation")
    if isolation == "remote":
        return Decision(NATIVE, "remote")
    if isolation not in (None, "", "worktree"):
        return Decision(NATIVE, "unknown-isolation")
    isolated = isolation == "worktree"
    # 9. plan mode: a worker would run with lich's permissions, not read-only
    if data.get("permission_mode") == "plan":
        return Decision(NATIVE, "plan-mode")
    prompt = tool_input.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return Decision(NATIVE, "no-prompt")
    description = tool_input.get("description")
    description = description if isinstance(description, str) else ""
    # 5. inside lich at all (silently native outside it)
    if env.bin is None or env.card is None:
        return Decision(NATIVE, "outside-lich")
    # 4. a `claude -p` started inside the card inherits its variables
    if not probes.interactive():
        return Decision(NATIVE, "not-interactive")
    # 6. subagent cards off for this session (setting, or lich's depth limit)
    if env.cards_off:
        if env.depth is not None and env.depth > 0:
            return Decision(TOAST, "cards-off-worker", why="why_cards_off_worker")
        return Decision(NATIVE, "cards-off")
    # 7. an older lich: a worker's isolated call stays native
    if not env.depth_set and isolated:
        current = probes.branch()
        if current is not None and current.startswith(WORKER_BRANCH_PREFIX):
            return Decision(NATIVE, "worker-branch")
    # 8. lich's task limit
    size = len(prompt.encode("utf-8", "surrogatepass"))
    if size > PROMPT_LIMIT:
        limits: dict[str, object] = {"size": size, "limit": PROMPT_LIMIT}
        return Decision(TOAST, "prompt-too-large", why="why_too_large", args=limits)
    # 5. LICH_BIN is an executable file: a broken one says why, then runs natively
    if not probes.bin_runnable():
        return Decision(TOAST, "bin-not-runnable", why="why_bin_unusable", args={"path": env.bin})
    call = Call(
        prompt=prompt,
        description=description,
        model=_text(tool_input.get("model")),
        isolated=isolated,
        tool_use_id=_text(data.get("tool_use_id")),
        cwd=_text(data.get("cwd")),
    )
    return Decision(TAKE, "take", call=call)
