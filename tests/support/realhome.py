"""What of ours a test could leave in the real home, so the suite can prove it leaves nothing.

Every test points HOME and the XDG variables at its tmp folder (tests/conftest.py), and a guard
around every test compares this snapshot before and after it. The snapshot holds only what our
code could write: our entries in each harness's settings file (its strings that name lich-hook,
wherever they stand), our module files, the backups `install` makes and the state directory. A
Claude Code, Codex, opencode or omp running beside the suite creates, rewrites and removes its
own files in the same folders all the time (`~/.codex/tmp/`, a settings key it keeps); none of
that is ours, so none of it counts. The places come from the package's own registry, so a
harness or scope added there is watched without a change here.

The one place the package itself may write while a test runs is the state directory, from a
real `lich-hook` working in a real lich card on this machine (HOME is then the real one). Run the
suite outside lich cards, or give that lich-hook its own LICH_HOOK_STATE_DIR.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Mapping
from pathlib import Path

from lich_hooks.base import homes
from lich_hooks.human.settings.registry import HARNESSES, SETTINGS
from lich_hooks.human.settings.settings_file import BACKUP_SUFFIX

REPO = Path(__file__).resolve().parents[2]
# The guard's own test plants writes into a stand-in home named here; nothing else sets it.
OVERRIDE = "LICH_TESTS_REAL_HOME"
READ_LIMIT = 4 << 20  # a settings file larger than this is compared by its first 4 MiB
STATE_LIMIT = 5000  # entries walked in the state directory (it is pruned to hundreds)
# A JSON or TOML string literal, and the ones that are ours: they name the program or the plugin.
STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
OURS = re.compile(rb"lich[-_]hook", re.IGNORECASE)
# The harnesses' own records that the plugin route (`claude plugin install`, `codex plugin add`)
# writes our plugin's name into: ours is only the strings that name it.
PLUGIN_RECORDS = (
    (".claude", "plugins", "installed_plugins.json"),
    (".claude", "plugins", "known_marketplaces.json"),
    (".codex", "config.toml"),
)

Snapshot = dict[str, object]


def real_home(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get(OVERRIDE) or pwd.getpwuid(os.getuid()).pw_dir)


def _environs(home: Path, started: Mapping[str, str]) -> list[dict[str, str]]:
    """The environments a leak could have used: the account's defaults, and the one the suite
    was started with (a developer's own CODEX_HOME, XDG_CONFIG_HOME, …) when it names this home."""
    plain = {"HOME": str(home)}
    if started.get(OVERRIDE):
        return [plain]
    own = {k: v for k, v in started.items() if not k.startswith("LICH_HOOK_")}
    own["HOME"] = str(home)
    return [plain, own]


def watched(started: Mapping[str, str], projects: list[Path]) -> tuple[set[Path], set[Path]]:
    """(files whose strings naming lich-hook are ours, files and folders that are ours whole)."""
    home = real_home(started)
    partly: set[Path] = {home.joinpath(*parts) for parts in PLUGIN_RECORDS}
    whole: set[Path] = set()
    for environ in _environs(home, started):
        for harness in HARNESSES.values():
            places = [harness.path("user", environ, str(home))]
            places += [harness.path("project", environ, str(project)) for project in projects]
            for place in map(Path, places):
                (partly if harness.key in SETTINGS else whole).add(place)
        for harness in SETTINGS.values():
            also = harness.also_reads
            if also is None:
                continue
            for project in projects:
                partly.update(Path(p) for _, p in also(environ, str(project)))
        state = homes.state_dir({k: v for k, v in environ.items() if k != "LICH_HOOK_STATE_DIR"})
        if state:
            whole.add(Path(state))
    whole.update(Path(f"{path}{BACKUP_SUFFIX}") for path in partly)
    return partly, whole


def _ours_in(path: Path) -> object:
    try:
        with path.open("rb") as handle:
            data = handle.read(READ_LIMIT)
    except FileNotFoundError:
        return []  # a harness may create or remove its own file: only our strings in it count
    except OSError as error:
        return f"unreadable: {error.errno}"
    return sorted(s for s in STRING.findall(data) if OURS.search(s))


def _whole(path: Path) -> object:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"unreadable: {error.errno}"
    if not path.is_dir() or path.is_symlink():
        return (info.st_mode, info.st_size, info.st_mtime_ns)
    tree: list[tuple[str, int, int, int]] = []
    for top, dirs, files in os.walk(path):
        for name in sorted(dirs + files):
            full = os.path.join(top, name)
            try:
                entry = os.lstat(full)
            except OSError:
                continue
            tree.append(
                (os.path.relpath(full, path), entry.st_mode, entry.st_size, entry.st_mtime_ns)
            )
            if len(tree) >= STATE_LIMIT:
                return tree
    return tree


def snapshot(places: tuple[set[Path], set[Path]]) -> Snapshot:
    partly, whole = places
    shot: Snapshot = {f"ours in {p}": _ours_in(p) for p in sorted(partly)}
    shot.update({str(p): _whole(p) for p in sorted(whole)})
    return shot


def changed(before: Snapshot, after: Snapshot, home: Path) -> list[str]:
    """The places whose share of ours differs, home-relative where they are in the home."""
    return [
        key.replace(str(home), "~", 1)
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]
