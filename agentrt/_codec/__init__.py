"""agentrt's value codec: values to self-describing blobs and back.

A blob is a small envelope (magic, versions, a JSON code table, a digest) around
a pickle payload that can only call agentrt's own reconstructors (in a signed blob
they include the pickle protocol of importable classes: ``_pickled``).  See
``docs/blob-format.md`` for the layout, the value set and the trust model.
"""

from agentrt._codec._code_identity import code_digest as code_digest
from agentrt._codec._code_identity import resolve_code as resolve_code
from agentrt._codec._decode import loads as loads
from agentrt._codec._encode import dumps as dumps
from agentrt._codec._format import CodeIdentity as CodeIdentity
from agentrt._codec._format import Header as Header
from agentrt._codec._format import read_header as read_header
from agentrt._codec._reopen import reopenable as reopenable
from agentrt._codec._serializable import serializable as serializable

__all__ = ["code_digest", "dumps", "loads", "read_header", "reopenable", "resolve_code", "serializable"]
