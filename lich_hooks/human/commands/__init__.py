"""The human commands as one click group, imported only when a person runs one (click costs more
than a hook run); each command is a plain run(environment, …) -> ExitCode."""

from __future__ import annotations

import os
import sys

import click

from lich_hooks import __version__
from lich_hooks.base.runlog import debug_wanted
from lich_hooks.hook.run import HOOK_USAGE
from lich_hooks.human.commands.environment import Environment, ExitCode
from lich_hooks.human.settings.kinds import SCOPES, Scope
from lich_hooks.human.settings.registry import HARNESSES, MODULES

HARNESS_CHOICE = click.Choice(list(HARNESSES), case_sensitive=False)
HARNESS_NAMES = ", ".join(HARNESSES)
MODULE_NAMES = " and ".join(MODULES)
SCOPE_HELP = "user: your home's settings (every project); project: the current directory's."


@click.group(
    epilog=HOOK_USAGE,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(
    __version__, "-V", "--version", prog_name="lich-hook", message="%(prog)s %(version)s"
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """lich-hook connects coding-agent CLIs to lich.

    Harnesses run it as `lich-hook <event> [<provider>]`; the commands below are for people.

    \b
    Examples:
      lich-hook doctor                  why does nothing report?
      lich-hook install claude          register with Claude Code (~/.claude/settings.json)
      lich-hook demo                    see every harness report to a stand-in lich
    """
    if ctx.obj is None:  # run_cli passes one; anyone calling the group directly gets this process's
        ctx.obj = Environment.from_process()


@cli.command(name="demo")
@click.option(
    "--verbose", "-v", is_flag=True, help="Also print each command, payload, request and stdout."
)
@click.pass_obj
def demo_command(environment: Environment, verbose: bool) -> int:
    """Run every shipped registration against a built-in stand-in for lich, and say in words
    what lich received and what each harness was told. Installs nothing.

    Example: lich-hook demo
    """
    from lich_hooks.human.commands import demo as demo_module

    return demo_module.run(environment, verbose=verbose)


@cli.command(name="listen")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Loopback port (0 picks a free one).",
)
@click.pass_obj
def listen_command(environment: Environment, port: int) -> int:
    """Run the stand-in for lich alone and print each report it receives.

    Example: lich-hook listen --port 47111
    """
    from lich_hooks.human.commands import listen as listen_module

    return listen_module.run(environment, port)


@cli.command(name="doctor")
@click.option("--json", "as_json", is_flag=True, help="One JSON object for scripts.")
@click.pass_obj
def doctor_command(environment: Environment, as_json: bool) -> int:
    """Check what reporting needs: lich's variables, its listener, LICH_BIN, the
    harness registrations, the state directory. Exits 1 when something is wrong.

    Run it in a terminal lich opened (a card), where the harness runs.

    \b
    Examples:
      lich-hook doctor
      lich-hook doctor --json | jq '.checks[] | select(.status == "fail")'
    """
    from lich_hooks.human.commands import doctor

    return doctor.run(environment, as_json=as_json)


INSTALL_HELP = f"""Register lich-hook with HARNESS ({HARNESS_NAMES}), running this
installation by absolute path: entries in the harness's own settings file, or
for {MODULE_NAMES} lich-hook's module file.

Other entries are kept; a re-run changes nothing; the previous file is
kept as <file>.lich-hook.bak; a file that does not parse is refused. A
module file that is not lich-hook's is refused.

\b
Examples:
  lich-hook install claude
  lich-hook install codex --scope project --dry-run
  lich-hook install opencode
"""

UNINSTALL_HELP = f"""Remove lich-hook's entries from HARNESS's settings file ({MODULE_NAMES}:
its module file, only when it is lich-hook's); nothing else changes.

\b
Examples:
  lich-hook uninstall crush
  lich-hook uninstall claude --scope project --dry-run
"""


def _settings_file_command(name: str, help_text: str, uninstall: bool) -> click.Command:
    """install and uninstall: the same HARNESS, --scope, --force and --dry-run, one flow;
    install's --verbose adds the commands it registered (a person needs only what happened)."""

    @click.argument("harness", type=HARNESS_CHOICE, metavar="HARNESS")
    @click.option(
        "--scope", type=click.Choice(SCOPES), default="user", show_default=True, help=SCOPE_HELP
    )
    @click.option(
        "--force", is_flag=True, help="Write the settings file even if its owner made it read-only."
    )
    @click.option("--dry-run", is_flag=True, help="Print the file's diff; change nothing.")
    @click.pass_obj
    def command(
        environment: Environment,
        harness: str,
        scope: Scope,
        force: bool,
        dry_run: bool,
        verbose: bool = False,
    ) -> int:
        from lich_hooks.human.commands import install

        return install.run(environment, harness.lower(), scope, dry_run, uninstall, force, verbose)

    if not uninstall:
        shown = "Also print the command each registered entry runs."
        command = click.option("--verbose", "-v", is_flag=True, help=shown)(command)
    return cli.command(name=name, help=help_text)(command)


install_command = _settings_file_command("install", INSTALL_HELP, uninstall=False)
uninstall_command = _settings_file_command("uninstall", UNINSTALL_HELP, uninstall=True)


@cli.command(
    name="status-line",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND…]")
def status_line_command(command: tuple[str, ...]) -> int:
    """A Claude Code statusLine: `lich: N worker(s)` while this card's workers run.

    After `--`, your own status line command (run directly, no shell, with the
    same stdin); its output comes first. See docs/agent-cards.md.

    \b
    Examples (the "command" of Claude Code's "statusLine" setting):
      lich-hook status-line
      lich-hook status-line -- ~/.claude/statusline.sh --compact
    """
    # Claude Code's runs never get here: cli.main sends them to the stdlib-only status_line.main
    # (it runs every few hundred milliseconds); this serves `--help` and callers of the group.
    from lich_hooks.hook import status_line

    return status_line.main(["--", *command] if command else [])


@cli.command(name="help")
@click.argument("command", required=False)
@click.pass_context
def help_command(ctx: click.Context, command: str | None) -> None:
    """Show help for lich-hook or one of its commands.

    Example: lich-hook help install
    """
    if command is None:
        click.echo(cli.get_help(ctx.parent or ctx))
        return
    sub = cli.get_command(ctx, command)
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


def run_cli(args: list[str], env: Environment | None = None) -> int:
    """The group's exit code, never raising; `env` None: read inside, so its errors are reported."""
    stderr = env.stderr if env is not None else sys.stderr

    def say(line: str) -> None:
        click.echo(line, file=stderr)

    try:
        if env is None:
            env = Environment.from_process()
        result = cli.main(args=args, prog_name="lich-hook", standalone_mode=False, obj=env)
    except click.UsageError as error:
        if type(error).__name__ == "NoArgsIsHelpError":  # click >= 8.2: bare `lich-hook`
            click.echo(error.format_message(), file=env.stdout if env else sys.stdout)
            return ExitCode.OK
        hint = f" (see: {error.ctx.command_path} --help)" if error.ctx is not None else ""
        message = " ".join(error.format_message().split())
        say(f"lich-hook: {message}{hint}")
        return ExitCode.USAGE
    except click.ClickException as error:
        say(f"lich-hook: {error.format_message()}")
        return error.exit_code
    except click.Abort:  # click's word for Ctrl-C or end of input at a prompt
        say("lich-hook: aborted")
        return ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except Exception as error:
        if debug_wanted(env.environ if env is not None else os.environ):
            import traceback

            traceback.print_exc(file=stderr)
        else:
            say(
                f"lich-hook: internal error: {type(error).__name__}: {error} "
                "(LICH_HOOK_DEBUG=1 shows the traceback)"
            )
        return ExitCode.INTERNAL_ERROR
    return result if isinstance(result, int) else ExitCode.OK
