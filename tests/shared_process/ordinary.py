"""The price of the rule: what share of conversations is still reported in ordinary
multi-card use, on the models (python -m tests.shared_process.ordinary).

Ordinary use: three cards, each in its own project directory, each with at
most one TUI at a time (Codex) or one client (Crush); turns, new
conversations, now and then a resume of one of the card's own sessions, a
quit and a later restart; the daemon unloads idle startup threads. A seeded
random walk, so the figure is the same on every run of the same code.
"""

from __future__ import annotations

import random

from tests.shared_process import model_codex, model_crush


def codex_share(steps: int = 4000, seed: int = 27, cards: int = 3) -> tuple[int, int, int]:
    """(conversations started, reported, wrong) over a walk of `steps` actions."""
    rng = random.Random(seed)
    daemon = model_codex.Daemon()
    tuis: dict[str, model_codex.Tui | None] = {c: None for c in model_codex.CARDS[:cards]}
    home = dict(zip(model_codex.CARDS, model_codex.DIRS, strict=True))
    for _ in range(steps):
        for _ in range(rng.choice((1, 3, 10))):  # people type (seconds)
            daemon.wait(1.0)
            if daemon.now >= daemon.flushed + 10:
                daemon.flush()  # the daemon writes its log every ~10 s (measured)
        card = rng.choice(list(tuis))
        tui = tuis[card]
        if tui is None:
            if rng.random() < 0.3:
                tuis[card] = daemon.start(card, home[card])
            continue
        roll = rng.random()
        if roll < 0.45:
            daemon.turn(tui, lasts=rng.choice((5.0, 20.0, 60.0)))  # an agent's turn
        elif roll < 0.65:
            daemon.slash_new(tui, clear=rng.random() < 0.25)
        elif roll < 0.72:
            own = [
                sid for sid in daemon.resumable(tui) if daemon.threads[sid].recorded == home[card]
            ]
            if own:
                daemon.slash_resume(tui, rng.choice(own), "session")
        elif roll < 0.8:
            daemon.quit(tui)
            tuis[card] = None
        else:
            idle = [s.sid for s in daemon.threads.values() if s.startup and not s.shown]
            if idle:
                daemon.unload(rng.choice(idle))
    daemon.wait(20)
    daemon.flush()
    daemon.wait(20)
    fired = [e for e in daemon.events if e.found is not None]
    return len(fired), sum(e.named is not None for e in fired), sum(e.wrong for e in fired)


def crush_share(steps: int = 4000, seed: int = 27, cards: int = 3) -> tuple[int, int, int]:
    """(conversations started, reported, wrong) on the crush server model."""
    rng = random.Random(seed)
    server = model_crush.Server()
    clients: dict[str, model_crush.Crush | None] = {c: None for c in model_crush.CARDS[:cards]}
    home = dict(zip(model_crush.CARDS, model_crush.DIRS, strict=True))
    for _ in range(steps):
        card = rng.choice(list(clients))
        client = clients[card]
        if client is None:
            if rng.random() < 0.3:
                clients[card] = server.join(card, home[card])
            continue
        roll = rng.random()
        if roll < 0.6:
            server.tool_call(client)
        elif roll < 0.8:
            server.new_session(client)
        elif roll < 0.9:
            server.leave(client)
            clients[card] = None
        else:
            server.idle(rng.random() < 0.5)
    fired = [e for e in server.events if e.found is not None]
    first = [e for e in fired if e.first]
    return len(first), sum(e.named is not None for e in first), sum(e.wrong for e in fired)


def main() -> None:
    for name, measure in (("codex daemon", codex_share), ("crush server", crush_share)):
        total, reported, wrong = measure()
        print(
            f"{name}: {reported}/{total} conversations reported "
            f"({100 * reported / max(total, 1):.0f}%), {wrong} on a wrong card"
        )


if __name__ == "__main__":
    main()
