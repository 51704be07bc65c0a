"""Crush's shared `crush server`: find the card a hook reports for, or refuse (docs/harnesses.md,
Crush); decide.py the rules, probe.py the reading."""

from __future__ import annotations

import os
import sys
import time

from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.crush import decide, probe
from lich_hooks.hook.shared.proc import ancestors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.hook.outcome import Context, Outcome


def card(ctx: Context) -> LichEnv | Outcome | None:
    """Under a `crush server`, the conversation's card or a refusal; None in local mode."""
    from lich_hooks.hook.outcome import Outcome

    started = time.monotonic()
    shared = core.shared_runner(ctx, who_runs(), "crush")
    if not isinstance(shared, tuple):
        return shared
    pid, payload = shared
    conversation = payload.session_id
    if conversation is None:
        return Outcome("no-session-id")
    # Dedupe first, at the local path's cost: keyed by the server process's life, in which a
    # workspace keeps its first client's environment, so only that card could be named again.
    from lich_hooks.hook import procfs
    from lich_hooks.hook.state import session_record

    remembered = f"{ctx.provider}\n{conversation}"
    life = procfs.started(pid)
    name = None if life is None else session_record.served_name(pid, life, remembered)
    if name is not None:
        known = _served_already(ctx, pid, name, remembered)
        if known is not None:
            return known
    found = find_card(pid, ctx.environ, payload.text("cwd"), conversation)
    if name is not None:
        card = (found.lich or {}).get("LICH_SESSION_ID")
        session_record.serve(ctx.environ, name, card, found.decision)
    return core.attributed(ctx, found, started)


def _served_already(ctx: Context, pid: int, name: str, remembered: str) -> Outcome | None:
    """`already-reported` when `remembered` went to a card whose last report it is, the refusal
    when it was refused within REFUSAL_SECONDS, else None."""
    from lich_hooks.hook import state
    from lich_hooks.hook.outcome import Outcome
    from lich_hooks.hook.state import session_record

    try:
        root = state.open_root(ctx.environ, create=False)
    except OSError:
        return None
    try:
        card, refused = session_record.served(root, name, time.time())
        if refused is not None:
            within = f"within {session_record.REFUSAL_SECONDS:g} s"
            ctx.log.set(attribution=f"refused under crush server {pid} {within}: {refused}")
            return Outcome(refused)
        if card is None or session_record.last_reported(root, card) != remembered:
            return None
    finally:
        root.close()
    ctx.log.set(attribution=f"already reported for card {card} under crush server {pid}")
    return Outcome("already-reported")


def who_runs(start: int | None = None, proc: str = probe.PROC) -> decide.Runner:
    chain = ancestors(os.getppid() if start is None else start, proc, decide.is_crush)
    return decide.runner(chain)


def find_card(
    server: int,
    environ: Mapping[str, str],
    cwd: str | None,
    session: str,
    proc: str = probe.PROC,
) -> decide.Attribution:
    """`environ`: the hook's own, i.e. the server's: it says where the socket is."""
    if sys.platform == "win32":
        # a named pipe's clients cannot be named from outside (docs/harnesses.md, Windows)
        return decide.Attribution(
            decide.UNSUPPORTED,
            f"crush server {server} runs this hook and Windows offers no way to find the client "
            "it runs it for (leave CRUSH_CLIENT_SERVER unset in cards)",
        )
    if not cwd or not os.path.isabs(cwd):
        return decide.Attribution(decide.NO_CWD, "the payload has no absolute cwd")
    from lich_hooks.hook import procfs

    try:
        socket = probe.socket_path(procfs.cmdline(server, proc), environ)
        # the server keeps each workspace's path as its client spelled it; /proc resolves
        listed_spaces = [
            decide.Workspace(w.id, os.path.realpath(w.path), w.lich)
            for w in probe.workspaces(socket)
        ]
        workspace = decide.workspace_at(listed_spaces, os.path.realpath(cwd))
        if isinstance(workspace, decide.Attribution):
            return workspace
        viewers = probe.session_viewers(socket, workspace.id, session)
        listed = probe.clients(server, proc) if probe.can_list_clients(proc) else None
    except probe.ProbeError as error:
        return decide.Attribution(decide.PROBE_FAILED, f"crush server {server}: {error}")
    if isinstance(listed, decide.Attribution):
        return listed
    held = viewers is not None
    return decide.choose(workspace, session, held, listed, resolved_dir, viewers)


def resolved_dir(client: decide.Client) -> str | None:
    """Symlinks resolved, as the workspace paths are (/proc's cwd is)."""
    where = decide.work_dir(client)
    return None if where is None else decide.normalise(os.path.realpath(where))


def guard_mark(environ: Mapping[str, str], card: str, conversation: str) -> str | None:
    """The mark the registered guard (human/settings/commandline.py MARK) tests in local mode, or
    None where it would not find it (ids or a state directory its shell spells otherwise, no local
    crush as the hook's parent: `$$`)."""
    from lich_hooks.base import homes
    from lich_hooks.hook import procfs

    if sys.platform == "win32" or environ.get("CRUSH_SESSION_ID") != conversation:
        return None
    if environ.get("LICH_SESSION_ID") != card or homes.file_key(card) != card:
        return None
    if homes.file_key(conversation) != conversation:
        return None
    shell, real = homes.marked_state_dir(environ), homes.state_dir(environ)
    if real is None or ".." in shell.split("/"):
        return None
    if os.path.normpath(shell) != os.path.normpath(real):
        return None
    parent = os.getppid()
    argv = procfs.cmdline(parent)
    if argv is None or not decide.is_crush(argv) or decide.is_server(argv):
        return None
    return f"{card}.{conversation}.{parent}"
