"""Which lich card a Crush hook reports for under `crush server`: pure rules over what probe.py
read. The server runs hooks with a workspace's first client's environment, so every client there
must name one card, or nothing is sent (docs/harnesses.md, Crush)."""

from __future__ import annotations

from lich_hooks.hook.shared.core import (
    OWN,
    UNKNOWN,
    Attribution,
    Client,
    Runner,
    flag_dir,
    nearest,
    normalise,
    one_card,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from lich_hooks.hook.shared.core import AttributionDecision, Member, RunnerKind, Words

__all__ = ["OWN", "UNKNOWN", "Attribution", "Client", "Runner", "normalise"]

SERVER: RunnerKind = "server"  # runner(): `crush server` runs the hook
CRUSH_NAMES = ("crush", "crush.exe")
# Crush's root flags that take a value (`crush --cwd DIR server`), so DIR is no subcommand.
VALUE_FLAGS = ("-c", "--cwd", "-D", "--data-dir", "-H", "--host", "--channels")
FOUND: AttributionDecision = "crush-server-card"
NOT_IN_LICH: AttributionDecision = "crush-server-client-outside-lich"
UNREADABLE: AttributionDecision = "crush-server-client-unreadable"
INVALID: AttributionDecision = "crush-server-client-invalid"
SEVERAL: AttributionDecision = "crush-server-several-cards"
NO_CWD: AttributionDecision = "crush-server-no-cwd"
NO_WORKSPACE: AttributionDecision = "crush-server-no-workspace"
NOT_ITS_SESSION: AttributionDecision = "crush-server-session-elsewhere"
NO_CLIENT: AttributionDecision = "crush-server-no-client"
UNSUPPORTED: AttributionDecision = "crush-server-unsupported"
PROBE_FAILED: AttributionDecision = "crush-server-probe-failed"
WORDS: Words = (FOUND, NOT_IN_LICH, UNREADABLE, INVALID, SEVERAL)


def is_crush(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    return argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower() in CRUSH_NAMES


def subcommand(argv: Sequence[str]) -> str | None:
    index = 1
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
        index += 2 if arg in VALUE_FLAGS else 1
    return None


def is_server(argv: Sequence[str]) -> bool:
    return is_crush(argv) and subcommand(argv) == "server"


def host_flag(argv: Sequence[str]) -> str | None:
    args = list(argv[1:])
    for index, arg in enumerate(args):
        if arg in ("-H", "--host") and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--host="):
            return arg[len("--host=") :]
    return None


def work_dir(client: Client) -> str | None:
    """A client started with `--cwd` joins that directory's workspace, whatever its own cwd."""
    return flag_dir(client, "-c", "--cwd")


def runner(ancestors: Sequence[tuple[int, Sequence[str]]] | None) -> Runner:
    return nearest(ancestors, (is_server, SERVER, "crush server"), (is_crush, "crush"))


def account(
    peers: set[int], holders: Sequence[Client], server_uid: int | None
) -> list[Client] | Attribution:
    """The server's clients when every connection it accepted is held by a fully read crush client
    of its user; else no card: any other holder may be anyone's (docs/harnesses.md, Crush)."""
    for holder in holders:
        what = f"process {holder.pid} holds a connection to the crush server"
        if not is_crush(holder.argv) or is_server(holder.argv):
            shown = holder.argv[0].rsplit("/", 1)[-1] if holder.argv else "?"
            return Attribution(UNREADABLE, f"{what} and is not a crush client ({shown!r})")
        if holder.uid is None or holder.uid != server_uid:
            return Attribution(UNREADABLE, f"{what} as another user (uid {holder.uid})")
        if holder.cwd is None or holder.lich is None:
            return Attribution(UNREADABLE, f"{what} and its cwd or environment is unreadable")
    left = set(peers)
    for holder in holders:
        left -= holder.held
    if left:
        return Attribution(
            UNREADABLE,
            f"{len(left)} connection(s) to the crush server are held by no crush process this "
            "hook can read (another name, another user's, or unreadable): cannot tell whose",
        )
    return list(holders)


class Workspace:
    """`lich`: its creator's LICH_* (or None)."""

    __slots__ = ("id", "lich", "path")

    def __init__(self, id: str, path: str, lich: Mapping[str, str] | None) -> None:
        self.id = id
        self.path = path
        self.lich = lich


def workspace_at(workspaces: Sequence[Workspace], cwd: str) -> Workspace | Attribution:
    want = normalise(cwd)
    here = [w for w in workspaces if normalise(w.path) == want]
    if len(here) == 1:
        return here[0]
    if not here:
        return Attribution(
            NO_WORKSPACE, f"none of the crush server's {len(workspaces)} workspace(s) is in {want}"
        )
    return Attribution(SEVERAL, f"{len(here)} crush server workspaces are in {want}")


def choose(
    workspace: Workspace,
    session: str,
    holds_session: bool,
    clients: Sequence[Client] | None,
    where: Callable[[Client], str | None] | None = None,
    viewers: int | None = None,
) -> Attribution:
    """The card owning `session` in `workspace` (`clients` None: unknown). `viewers` (the server's
    `attached_clients`) of 0: a `crush run` or a quit client's turn, whose card is unknown."""
    want = normalise(workspace.path)
    if not holds_session:
        return Attribution(
            NOT_ITS_SESSION, f"crush workspace {workspace.id} in {want} has no session {session}"
        )
    if clients is None:
        return Attribution(
            UNSUPPORTED,
            "crush server runs this hook and this system offers no way to list its clients "
            "(start cards without CRUSH_CLIENT_SERVER)",
        )
    where = work_dir if where is None else where
    here = [c for c in clients if where(c) == want]
    if not here:
        return Attribution(
            NO_CLIENT,
            f"none of the crush server's {len(clients)} connected crush client(s) works in {want}",
        )
    if viewers == 0:
        return Attribution(
            NO_CLIENT,
            f"no crush TUI shows session {session}: a `crush run` (which shows none) or a "
            "client that quit while others keep the workspace runs it, and nothing says whose",
        )
    first = f"crush workspace {workspace.id}'s environment (its first client's)"
    members: list[Member] = [(first, workspace.lich, None, None)]
    members += [(f"crush client {c.pid}", c.lich, c.pid, None) for c in here]
    return one_card(
        members, f"in {want}", WORDS, f"the workspace and its {len(here)} crush client(s)"
    )
