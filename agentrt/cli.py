"""The ``agentrt`` command line (console script and ``python -m agentrt``).

Subcommands (``run``, ``resume``, ``runs``, ``show``, ``dump``, ``check``) are added
by their own modules: each one registers itself in :func:`build_parser` with
``subparsers.add_parser(...)`` and ``set_defaults(handler=...)``, where the handler
takes the parsed :class:`argparse.Namespace` and returns the process exit code.

Start-up cost matters here (every test and every ``submit`` pays it): when the command line names
a known subcommand, only the module that registers it is imported (``agentrt runs`` never imports
the validator, the teams layer or the runtime); with no command, ``--help`` or an unknown word,
none of them is: help and "invalid choice" list every command from a static table of names and
one-line help (:data:`_COMMANDS`, checked against the modules by the tests).  ``--version`` reads
the package metadata only when asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast  # Any: an argparse Action's pass-through arguments

__all__ = ["build_parser", "main"]

#: Exit code for a usage error, as argparse uses it.
EXIT_USAGE = 2
#: Exit code when the reader of stdout went away (`agentrt runs | head -1`): 128 + SIGPIPE, as shells say.
EXIT_OUTPUT_CLOSED = 141

Handler = Callable[[argparse.Namespace], int]


def _version() -> str:
    from importlib import metadata  # only for --version: ~60 modules nobody else needs

    try:
        return metadata.version("agentrt")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


class _VersionAction(argparse.Action):
    """``--version``: like argparse's ``version`` action, with the version looked up when used."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        sys.stdout.write(f"{parser.prog} {_version()}\n")  # on stdout, as argparse's own action
        parser.exit()


def _columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` finds it, without importing
    :mod:`shutil`: argparse imports it for every help formatter it makes (one per argument
    added), and with it bz2, lzma and zlib, a few ms of every command's start-up."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    stdout = sys.__stdout__  # None when Python runs without a stdout (pythonw)
    if columns <= 0 and stdout is not None:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found by :func:`_columns` (argparse's own rule: the
    terminal's width less 2)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **kwargs: Any,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width, **kwargs)


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help formatter defaults to :class:`_HelpFormatter`; the
    subcommands' parsers are of this class too (``add_subparsers`` makes ``type(self)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


#: Every subcommand, in the order ``agentrt --help`` lists them: the module whose ``register(commands)``
#: adds its parser, and its one-line help.  The help is written here as well as in the module so that
#: ``agentrt --help`` (and "invalid choice") can list every command without importing any of them:
#: those modules pull in the validator, the runtime and the stores, which made ``--help`` ~3x the
#: start-up of ``python -c "import asyncio"``.  tests/cli/test_cold_start.py checks that this table
#: and the modules' own parsers agree, name for name and word for word.
_COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("agentrt._cli.check_cmds", "report what cannot cross an await, without running the code"),
    "dump": (
        "agentrt._cli.checkpoint_cmds",
        "frame dump of a checkpoint: frames, locals, value stacks, pending request",
    ),
    "diff": ("agentrt._cli.checkpoint_cmds", "what changed between two checkpoints of a run"),
    "fork": ("agentrt._cli.checkpoint_cmds", "a new run continuing from an earlier checkpoint of a run"),
    "keygen": (
        "agentrt._cli.keygen",
        "create or rotate the key that signs checkpoints (project key file, a store's, or printed)",
    ),
    "teams": (
        "agentrt.teams._cli",
        "teams of specialists: plan a team, lint receipts, usage per tier and lane",
    ),
    "run": ("agentrt._cli.drive", "start a run and drive it until it completes or waits"),
    "resume": ("agentrt._cli.drive", "continue an interrupted, waiting or blocked run"),
    "retry": (
        "agentrt._cli.drive",
        "restart a failed or blocked run from a checkpoint, on the code loaded now",
    ),
    "runs": ("agentrt._cli.inspect_cmds", "list runs"),
    "show": ("agentrt._cli.inspect_cmds", "status, output or error, pending request, checkpoint history"),
    "move": ("agentrt._cli.move", "move a run and its sub-runs to another store, re-sealed for it"),
    "worker": ("agentrt._cli.workers", "claim and drive the store's runnable runs until SIGTERM/SIGINT"),
    "submit": ("agentrt._cli.workers", "store a queued run for a worker"),
    "reply": ("agentrt._cli.workers", "answer the question a run waits on; a worker continues it"),
    "cancel": ("agentrt._cli.workers", "cancel a run and its sub-runs"),
    "workers": (
        "agentrt._cli.fleet_cmds",
        "list the live workers, the code they carry, and the runs none of them can resume",
    ),
    "serve": ("agentrt._cli.serve", "serve the HTTP API and the runs page"),
    "upgrade": (
        "agentrt._cli.upgrade_cmds",
        "move unfinished runs to the code loaded now (see what would happen with --dry-run)",
    ),
}
#: The module registering each subcommand (its ``register(commands)`` adds the command's parser).
_COMMAND_MODULES = {name: module for name, (module, _help) in _COMMANDS.items()}


def build_parser(command: str | None = None, *, full: bool = False) -> argparse.ArgumentParser:
    """The ``agentrt`` parser.

    With a known ``command``: that command's real parser (its module imported), so its options
    parse and ``agentrt COMMAND --help`` shows them.  Otherwise (no command, ``--help``, an unknown
    word): every command by name and one-line help from :data:`_COMMANDS`, importing none of their
    modules.  ``full=True`` registers every command's real parser (what the drift test compares).
    """
    parser = _Parser(
        prog="agentrt",
        description="Run, resume and inspect durable agentrt agents.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    # the command modules take the action as argparse's (its parsers are _Parser all the same)
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", title="commands"),
    )
    _add_commands(commands, command, full)
    return parser


def _add_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], command: str | None, full: bool
) -> None:
    """Register the subcommands: a module's ``register`` calls ``commands.add_parser(NAME, help=...)``
    then ``.set_defaults(handler=FUNCTION)``; a listed-only command is a bare ``add_parser``."""
    if full:
        for every in dict.fromkeys(_COMMAND_MODULES.values()):
            __import__(every, fromlist=["register"]).register(commands)
        return
    module = _COMMAND_MODULES.get(command or "")
    if module:
        __import__(module, fromlist=["register"]).register(commands)
        return
    for name, (_module, help_text) in _COMMANDS.items():
        commands.add_parser(name, help=help_text)


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line: the first word that is not an option."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (the console script passes it to ``sys.exit``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_word(argv))
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        code = handler(args)
        sys.stdout.flush()  # here, not at exit: a reader that went away is seen inside this try
    except BrokenPipeError:
        return output_closed()
    return code


def output_closed() -> int:
    """The reader of stdout went away (``agentrt runs | head -1``): say nothing more, no traceback.

    Python's documented recipe: point stdout at /dev/null so the flush at exit has nowhere
    to fail, and exit with the status a shell gives a process that SIGPIPE ended.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_OUTPUT_CLOSED
