"""The Crush server attribution's rules, over recorded snapshots (no processes, no sockets)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.hook.shared.crush import decide
from lich_hooks.hook.shared.crush.decide import Client, Workspace

CRUSH = "/usr/local/bin/crush"


def card(name: str, port: str = "4100", token: str = "tok") -> dict[str, str]:
    return {"LICH_SESSION_ID": name, "LICH_PORT": port, "LICH_TOKEN": token}


def client(pid: int, cwd: str | None, lich: dict[str, str] | None) -> Client:
    return Client(pid, [CRUSH], cwd, lich)


def test_the_server_runs_hooks_for_others_a_local_crush_for_itself() -> None:
    server = [(30, ["/bin/sh", "-c", "lich-hook"]), (20, [CRUSH, "server"])]
    assert decide.runner(server).kind == decide.SERVER
    assert decide.runner(server).pid == 20
    for argv in ([CRUSH], [CRUSH, "run", "server"], [CRUSH, "--cwd", "server", "run"]):
        assert decide.runner([(20, argv)]).kind == decide.OWN, argv
    assert decide.runner([(20, [CRUSH, "-d", "-H", "unix:///x.sock", "server"])]).kind == "server"
    assert decide.runner([(1, ["/sbin/init"])]).kind == decide.OWN
    assert decide.runner(None).kind == decide.UNKNOWN


def test_the_nearest_crush_decides() -> None:
    # a `crush run` started by a tool command inside the server runs its own hooks
    chain = [(40, [CRUSH, "run", "x"]), (30, ["/bin/sh"]), (20, [CRUSH, "server"])]
    assert decide.runner(chain).kind == decide.OWN


def test_host_flag() -> None:
    assert decide.host_flag([CRUSH, "server", "--host", "unix:///s"]) == "unix:///s"
    assert decide.host_flag([CRUSH, "server", "--host=tcp://x:1"]) == "tcp://x:1"
    assert decide.host_flag([CRUSH, "server"]) is None


SPACE = Workspace("ws-1", "/work/a", card("card-A"))


def test_one_card_in_its_directory_is_named() -> None:
    found = decide.choose(SPACE, "s1", True, [client(7, "/work/a", card("card-A"))])
    assert found.decision == decide.FOUND and found.lich == card("card-A")


def test_a_second_card_that_joined_the_workspace_refuses_both() -> None:
    clients = [client(7, "/work/a", card("card-A")), client(8, "/work/a", card("card-B"))]
    found = decide.choose(SPACE, "s1", True, clients)
    assert found.decision == decide.SEVERAL and found.lich is None
    assert "card-A" in found.why and "card-B" in found.why


def test_the_creator_gone_and_another_card_there_refuses() -> None:
    # first wins: the workspace still carries card A's variables, only card B is connected
    found = decide.choose(SPACE, "s1", True, [client(8, "/work/a", card("card-B"))])
    assert found.decision == decide.SEVERAL


def test_clients_elsewhere_do_not_count() -> None:
    clients = [client(7, "/work/a", card("card-A")), client(8, "/work/b", card("card-B"))]
    assert decide.choose(SPACE, "s1", True, clients).lich == card("card-A")


def test_refusals() -> None:
    here = [client(7, "/work/a", card("card-A"))]
    assert decide.choose(SPACE, "s1", False, here).decision == decide.NOT_ITS_SESSION
    assert decide.choose(SPACE, "s1", True, None).decision == decide.UNSUPPORTED
    assert decide.choose(SPACE, "s1", True, []).decision == decide.NO_CLIENT
    outside = [client(7, "/work/a", {})]
    assert decide.choose(SPACE, "s1", True, outside).decision == "crush-server-client-outside-lich"
    unreadable = [client(7, "/work/a", None)]
    assert decide.choose(SPACE, "s1", True, unreadable).decision == "crush-server-client-unreadable"
    bad_port = [client(7, "/work/a", card("card-A", port="0"))]
    assert decide.choose(SPACE, "s1", True, bad_port).decision == "crush-server-client-invalid"
    no_env = Workspace("ws-1", "/work/a", {})
    found = decide.choose(no_env, "s1", True, here)
    assert found.decision == "crush-server-client-outside-lich"


def test_workspace_at() -> None:
    spaces = [Workspace("1", "/work/a/", None), Workspace("2", "/work/b", None)]
    found = decide.workspace_at(spaces, "/work/a")
    assert isinstance(found, Workspace) and found.id == "1"
    missing = decide.workspace_at(spaces, "/work/c")
    assert isinstance(missing, decide.Attribution) and missing.decision == decide.NO_WORKSPACE


@settings(deadline=None)
@given(st.lists(st.sampled_from(["card-A", "card-B", None]), min_size=1, max_size=5))
def test_a_card_is_named_only_when_everyone_there_names_it(cards: list[str | None]) -> None:
    clients = [client(i, "/work/a", card(c) if c else {}) for i, c in enumerate(cards)]
    found = decide.choose(SPACE, "s1", True, clients)
    if all(c == "card-A" for c in cards):
        assert found.lich == card("card-A")
    else:
        assert found.lich is None


def test_a_client_started_with_cwd_into_another_card_s_dir_counts_there() -> None:
    """Found by the model (tests/shared_process/test_crush_model.py): card A's client runs in
    /p/a but was started `crush --cwd /p/b`, so it joined the workspace card B created in
    /p/b. Before, only clients whose own cwd was /p/b counted there, and card A's session
    was reported on card B."""
    space = Workspace("ws-b", "/p/b", card("card-B"))
    moved = Client(11, [CRUSH, "--cwd", "/p/b"], "/p/a", card("card-A", "4101", "t2"))
    home = client(12, "/p/b", card("card-B"))
    found = decide.choose(space, "s1", True, [moved, home])
    assert (found.decision, found.lich) == (decide.SEVERAL, None)
    for argv in (["-c", "../b"], ["--cwd=../b"], ["-c../b"], ["-c=/p/b"]):
        assert decide.work_dir(Client(11, [CRUSH, *argv, "run", "x"], "/p/a", None)) == "/p/b"
    assert decide.work_dir(Client(11, [CRUSH, "run", "--", "--cwd", "/p/b"], "/p/a", None)) == (
        "/p/a"
    )


def holder(
    pid: int,
    argv: list[str],
    uid: int | None = 1000,
    cwd: str | None = "/work/a",
    lich: dict[str, str] | None = None,
) -> decide.Client:
    found = decide.Client(pid, argv, cwd, card("card-A") if lich is None else lich)
    found.held, found.uid = {pid}, uid
    return found


def test_every_peer_is_held_by_a_readable_crush_client_of_the_server_s_user() -> None:
    """Issue 31: a connection held by a process of another name or user, one whose cwd or
    environment cannot be read, or held by no process read, means cannot tell."""
    good = holder(7, [CRUSH])
    unreadable_env = holder(8, [CRUSH])
    unreadable_env.lich = None
    assert decide.account({7}, [good], 1000) == [good]
    for bad, why in [
        (holder(8, ["/home/u/bin/cx"]), "is not a crush client ('cx')"),
        (holder(8, []), "is not a crush client ('?')"),
        (holder(8, [CRUSH, "server"]), "is not a crush client"),
        (holder(8, [CRUSH], uid=0), "as another user (uid 0)"),
        (holder(8, [CRUSH], uid=None), "as another user"),
        (holder(8, [CRUSH], cwd=None), "cwd or environment is unreadable"),
        (unreadable_env, "cwd or environment is unreadable"),
    ]:
        found = decide.account({7, 8}, [good, bad], 1000)
        assert isinstance(found, decide.Attribution) and found.decision == decide.UNREADABLE
        assert why in found.why, (bad, found.why)
    missing = decide.account({7, 9}, [good], 1000)
    assert isinstance(missing, decide.Attribution) and missing.decision == decide.UNREADABLE
    assert "1 connection(s)" in missing.why and "held by no crush process" in missing.why
