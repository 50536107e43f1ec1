"""``agentrt keygen``: make a blob key, or rotate one (the new key signs, the old ones still verify)."""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path

from agentrt import keys
from agentrt._cli.common import EXIT_HOST, fail
from agentrt.exceptions import BlobKeyRejected

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "keygen",
        help="create or rotate the key that signs checkpoints (project key file, a store's, or printed)",
        description=(
            "Adds a new random key in front of a key file: new blobs are signed with it, blobs signed "
            "with the older keys in the file still verify.  Default file: the project key "
            f"(${keys.KEY_FILE_ENV}, else ~/.config/agentrt/blob.key).  For a shared store (PostgreSQL), "
            f"use --print and set ${keys.KEY_ENV} to the key on every machine."
        ),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--file", metavar="PATH", help="the key file to create or rotate")
    where.add_argument("--store", metavar="DB", help="rotate the key file of the SQLite store DB (DB.key)")
    where.add_argument(
        "--print", action="store_true", help=f"print a new key (for ${keys.KEY_ENV}) and write nothing"
    )
    parser.set_defaults(handler=cmd_keygen)


def cmd_keygen(args: argparse.Namespace) -> int:
    if args.print:
        print(secrets.token_hex(32))
        return 0
    if args.store:
        path = keys.store_key_path(args.store)
    elif args.file:
        path = Path(args.file)
    else:
        path = keys.project_key_path()
    try:  # an existing file must pass the same checks: its keys stay readable keys
        keys.add_key(path)
        ring = keys.read_key_file(path)
    except BlobKeyRejected as exc:
        return fail(str(exc), EXIT_HOST)
    kept = len(ring.read) if ring is not None else 0
    print(f"new blob key written to {path} (mode 0600); {kept} key(s) in it, the first one signs")
    print(f"for a shared (PostgreSQL) store: `agentrt keygen --print`, and set ${keys.KEY_ENV} to the key")
    if keys.env_keyring() is not None:
        print(f"note: ${keys.KEY_ENV} is set in this environment and overrides every key file")
    return 0
