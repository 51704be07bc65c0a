"""The human-facing commands, as one click group.

Imported only when a person (not a harness) runs `lich-hook`: click costs more
than a whole hook run (docs/performance.md). Each command's work lives in a
plain function in its own module that returns an exit code; this module only
parses arguments. Exit codes: 0 ok, 1 a problem found or refused, 2 bad usage.
Errors are one line on stderr; a traceback only under LICH_HOOK_DEBUG.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from lich_hooks import __version__

F = TypeVar("F", bound=Callable[..., Any])

HOOK_USAGE = "As a hook: lich-hook <event> [<provider>]  (payload on stdin; see docs/harnesses.md)"
HARNESS_CHOICE = click.Choice(["claude", "codex", "crush", "antigravity"], case_sensitive=False)
SCOPE_HELP = "user: your home's settings (every project); project: the current directory's."


def _colour() -> bool:
    from lich_hooks.commands.style import wanted

    return wanted()


@click.group(
    epilog=HOOK_USAGE,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(
    __version__, "-V", "--version", prog_name="lich-hook", message="%(prog)s %(version)s"
)
def cli() -> None:
    """lich-hook connects coding-agent CLIs to lich.

    Harnesses run it as `lich-hook <event> [<provider>]`; the commands below are for people.

    \b
    Examples:
      lich-hook doctor                  why does nothing report?
      lich-hook install claude          register with Claude Code (~/.claude/settings.json)
      lich-hook demo                    see every harness report to a stand-in lich
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


@cli.command(name="doctor")
@click.option("--json", "as_json", is_flag=True, help="One JSON object for scripts.")
def doctor_command(as_json: bool) -> None:
    """Check what reporting needs: lich's variables, its listener, LICH_BIN, the
    harness registrations, the state directory. Exits 1 when something is wrong.

    Run it in a terminal lich opened (a card), where the harness runs.

    \b
    Examples:
      lich-hook doctor
      lich-hook doctor --json | jq '.checks[] | select(.status == "fail")'
    """
    from lich_hooks.commands import doctor

    raise SystemExit(doctor.run(as_json=as_json, out=click.echo, color=_colour()))


def _settings_file_options(command: F) -> F:
    """HARNESS, --scope and --dry-run: install and uninstall take the same three."""
    dry_run = click.option("--dry-run", is_flag=True, help="Print the file's diff; change nothing.")
    command = dry_run(command)
    command = click.option(
        "--force", is_flag=True, help="Write the settings file even if its owner made it read-only."
    )(command)
    command = click.option(
        "--scope",
        type=click.Choice(["user", "project"]),
        default="user",
        show_default=True,
        help=SCOPE_HELP,
    )(command)
    return click.argument("harness", type=HARNESS_CHOICE, metavar="HARNESS")(command)


@cli.command(name="install")
@_settings_file_options
def install_command(harness: str, scope: str, dry_run: bool, force: bool) -> None:
    """Register lich-hook with HARNESS (claude, codex, crush, antigravity) in its own
    settings file, running this installation by absolute path.

    Other entries are kept; a re-run changes nothing; the previous file is
    kept as <file>.lich-hook.bak; a file that does not parse is refused.

    \b
    Examples:
      lich-hook install claude
      lich-hook install codex --scope project --dry-run
    """
    from lich_hooks.commands import install

    raise SystemExit(
        install.run(harness.lower(), scope, dry_run, out=click.echo, color=_colour(), force=force)
    )


@cli.command(name="uninstall")
@_settings_file_options
def uninstall_command(harness: str, scope: str, dry_run: bool, force: bool) -> None:
    """Remove lich-hook's entries from HARNESS's settings file; nothing else changes.

    \b
    Examples:
      lich-hook uninstall crush
      lich-hook uninstall claude --scope project --dry-run
    """
    from lich_hooks.commands import install

    raise SystemExit(
        install.run(
            harness.lower(),
            scope,
            dry_run,
            uninstall=True,
            out=click.echo,
            color=_colour(),
            force=force,
        )
    )


@cli.command(name="help")
@click.argument("command", required=False)
@click.pass_context
def help_command(ctx: click.Context, command: str | None) -> None:
    """Show help for lich-hook or one of its commands.

    Example: lich-hook help install
    """
    group = ctx.parent.command if ctx.parent else cli
    assert isinstance(group, click.Group)
    if command is None:
        click.echo(group.get_help(ctx.parent or ctx))
        return
    sub = group.get_command(ctx, command)
    if sub is None:
        raise click.UsageError(f"no command named {command!r}")
    with click.Context(sub, info_name=command, parent=ctx.parent) as sub_ctx:
        click.echo(sub.get_help(sub_ctx))


@cli.command(name="version")
def version_command() -> None:
    """Print the version (same as --version).

    Example: lich-hook version
    """
    click.echo(f"lich-hook {__version__}")


def _debug() -> bool:
    return os.environ.get("LICH_HOOK_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def run_cli(args: list[str]) -> int:
    """Run the click group on `args` and return its exit code (never raise)."""
    try:
        result = cli.main(args=args, prog_name="lich-hook", standalone_mode=False)
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except click.UsageError as error:
        if type(error).__name__ == "NoArgsIsHelpError":  # click >= 8.2: bare `lich-hook`
            click.echo(error.format_message())
            return 0
        hint = ""
        if error.ctx is not None:
            hint = f" (see: {error.ctx.command_path} --help)"
        message = " ".join(error.format_message().split())
        click.echo(f"lich-hook: {message}{hint}", err=True)
        return 2
    except click.ClickException as error:
        click.echo(f"lich-hook: {error.format_message()}", err=True)
        return error.exit_code
    except click.Abort:
        click.echo("lich-hook: aborted", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if _debug():
            import traceback

            traceback.print_exc()
        else:
            click.echo(
                f"lich-hook: internal error: {type(error).__name__}: {error} "
                "(LICH_HOOK_DEBUG=1 shows the traceback)",
                err=True,
            )
        return 1
    return result if isinstance(result, int) else 0
