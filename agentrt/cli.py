"""The ``agentrt`` command line (console script and ``python -m agentrt``).

Subcommands (``run``, ``resume``, ``runs``, ``show``, ``dump``, ``check``) are added
by their own modules: each one registers itself in :func:`build_parser` with
``subparsers.add_parser(...)`` and ``set_defaults(handler=...)``, where the handler
takes the parsed :class:`argparse.Namespace` and returns the process exit code.

Start-up cost matters here (every command pays it): when the command line names a known
subcommand, only the module that registers it is imported (``agentrt runs`` never imports the
validator, the teams layer or the runtime); with no command, ``--help`` or an unknown word, all of
them are, so help and "invalid choice" list every command.  ``--version`` reads the package
metadata only when asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any  # Any: an argparse Action's pass-through arguments

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


#: The module registering each subcommand (its ``register(commands)`` adds the command's parser).
_COMMAND_MODULES = {
    "check": "agentrt._cli.check_cmds",
    "dump": "agentrt._cli.checkpoint_cmds",
    "diff": "agentrt._cli.checkpoint_cmds",
    "fork": "agentrt._cli.checkpoint_cmds",
    "keygen": "agentrt._cli.keygen",
    "teams": "agentrt.teams._cli",
    "run": "agentrt._cli.drive",
    "resume": "agentrt._cli.drive",
    "retry": "agentrt._cli.drive",
    "runs": "agentrt._cli.inspect_cmds",
    "show": "agentrt._cli.inspect_cmds",
    "worker": "agentrt._cli.workers",
    "workers": "agentrt._cli.fleet_cmds",
    "submit": "agentrt._cli.workers",
    "reply": "agentrt._cli.workers",
    "cancel": "agentrt._cli.workers",
    "serve": "agentrt._cli.serve",
    "upgrade": "agentrt._cli.upgrade_cmds",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``agentrt`` parser: with every subcommand, or only ``command``'s when it is a known one."""
    parser = argparse.ArgumentParser(
        prog="agentrt",
        description="Run, resume and inspect durable agentrt agents.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    _add_commands(commands, command)
    return parser


def _add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser], command: str | None) -> None:
    """Register the subcommands: ``commands.add_parser(NAME, help=...)`` then
    ``.set_defaults(handler=FUNCTION)``; only ``command``'s module when it names a known one."""
    module = _COMMAND_MODULES.get(command or "")
    for name in [module] if module else list(dict.fromkeys(_COMMAND_MODULES.values())):
        __import__(name, fromlist=["register"]).register(commands)


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
