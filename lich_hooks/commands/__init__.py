"""The human-facing commands, as one click group.

Imported only when a person (not a harness) runs `lich-hook`: click costs more
than a whole hook run (docs/performance.md). Each command's work lives in a
plain function in its own module that returns an exit code; this module only
parses arguments. Exit codes: 0 ok, 1 a problem found or refused, 2 bad usage.
"""

from __future__ import annotations

import click

from lich_hooks import __version__

HOOK_USAGE = "As a hook: lich-hook <event> [<provider>]  (payload on stdin; see docs/harnesses.md)"


@click.group(
    epilog=HOOK_USAGE,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "-V", "--version", prog_name="lich-hook")
def cli() -> None:
    """lich-hook connects coding-agent CLIs to lich.

    Harnesses run it as `lich-hook <event> [<provider>]`; the commands below are for people.
    """


@cli.command(name="demo")
def demo_command() -> None:
    """Run every shipped registration against a built-in stand-in for lich.

    Example: lich-hook demo
    """
    from lich_hooks.commands import demo as demo_module

    raise SystemExit(demo_module.run(click.echo))


@cli.command(name="listen")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Loopback port (0 picks a free one).",
)
def listen_command(port: int) -> None:
    """Run the stand-in for lich alone and print each report it receives.

    Example: lich-hook listen --port 47111
    """
    from lich_hooks.commands import listen as listen_module

    raise SystemExit(listen_module.run(port, click.echo))


def run_cli(args: list[str]) -> int:
    """Run the click group on `args` and return its exit code (never raise)."""
    # cli.py sends the words `help` and `version` here; click knows them as options.
    if args[:1] == ["help"]:
        args = [*args[1:2], "--help"]
    elif args[:1] == ["version"]:
        args = ["--version"]
    try:
        cli.main(args=args, prog_name="lich-hook", standalone_mode=True)
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0
