"""The plugin route's hook, imported by boot.py once it has found a Python it can run on: its
own file size limit back (the launcher bounds a candidate's), USR1 to the launcher and stdout from
fd 4 (docs/install.md). The package is loaded from this file's grandparent by path: a harness may
copy it into `<cache>/<version>/`. A module, not part of boot.py: Python compiles a script on every
run and a module once (docs/performance.md)."""

import os
import sys

launcher = os.environ.pop("LICH_HOOK_LAUNCHER", "")
out = os.environ.pop("LICH_HOOK_OUT", "")
handoff = None
if launcher:
    try:  # the launcher bounds each candidate's files (its output file): not the hook's, nor lich's
        import resource

        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass
    try:
        os.dup2(4, 1)
        os.close(4)
    except OSError:
        pass
    try:
        from _signal import SIGUSR1  # type: ignore[import-not-found]  # `signal` imports enum

        pid = int(launcher)
        # Only a launcher of our own process group: never a pid reused after it died.
        if pid > 1 and os.getpgid(pid) == os.getpgrp():
            os.kill(pid, SIGUSR1)
    except (ImportError, ValueError, OSError, AttributeError):
        pass
    if out:  # the file fd 4 is: the launcher reads it through its own descriptor
        try:
            os.unlink(out)
            # its folder is removed once the output is in the file whole (hook/run.py), and
            # holds the FIFO it goes through otherwise (hook/handoff.py)
            handoff = (int(launcher), os.path.dirname(out))
        except (OSError, ValueError):
            pass

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    if os.path.basename(root) == "lich_hooks":
        sys.path.insert(0, os.path.dirname(root))
    else:
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "lich_hooks", os.path.join(root, "__init__.py"), submodule_search_locations=[root]
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules["lich_hooks"] = package
        spec.loader.exec_module(package)
    from lich_hooks import cli
    from lich_hooks.hook import claim  # noqa: F401 - a copy missing it is broken

    if sys.argv[1:2] in (["SessionStart"], ["--version"]):  # doctor asks with --version
        from lich_hooks.hook.jobs import session_start  # noqa: F401 - the job this event runs
    plugin_main = cli.plugin_main
except BaseException:  # a broken copy must not break the harness
    plugin_main = None  # type: ignore[assignment]

if len(sys.argv) > 1 and sys.argv[1] == "--version":
    sys.exit(0 if plugin_main is not None else 1)
if plugin_main is None:
    args = sys.argv[1:]
    environ = os.environ
    if args[:1] == ["SessionStart"] and all(
        environ.get(name) for name in ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID")
    ):
        try:  # the harness's own fix, from the one table (a copy this broken may lack it)
            from lich_hooks.base.harnesses import REGISTRATIONS

            fix = REGISTRATIONS[args[1] if len(args) > 1 else "claude"].plugin_fix
        except BaseException:
            fix = None
        fix = fix or "remove the lich-hooks plugin and install it again"
        message = (
            f"lich-hooks cannot report this session to lich: its plugin copy in {root} is "
            f"incomplete. Fix: {fix}. Then start a new session."
        )
        import json

        sys.stdout.write(json.dumps({"systemMessage": message}) + "\n")
        sys.stdout.flush()
    os._exit(0)
try:
    plugin_main(sys.argv[1:], handoff)
finally:
    os._exit(0)  # once run, never a non-zero exit: the launcher would run the hook again
