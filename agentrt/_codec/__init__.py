"""agentrt's value codec: values to self-describing blobs and back.

A blob is a small envelope (magic, versions, a JSON code table, a digest) around
a pickle payload that can only call agentrt's own reconstructors (in a signed blob
they include the pickle protocol of importable classes: ``_pickled``).  See
``docs/blob-format.md`` for the layout, the value set and the trust model.
"""

from agentrt._codec._bounds import check_bounds as check_bounds
from agentrt._codec._bounds import describe_error as describe_error
from agentrt._codec._code_identity import _index as codes_by_qualname
from agentrt._codec._code_identity import code_digest as code_digest
from agentrt._codec._code_identity import resolve_code as resolve_code
from agentrt._codec._code_identity import short as short
from agentrt._codec._decode import _TOKEN as DRY_TOKEN
from agentrt._codec._decode import DRY as DRY
from agentrt._codec._decode import STRICT as STRICT
from agentrt._codec._decode import VERIFIED as VERIFIED
from agentrt._codec._decode import Requirement as Requirement
from agentrt._codec._decode import _Loader as RestrictedUnpickler
from agentrt._codec._decode import _unpickle as unpickle_payload
from agentrt._codec._decode import loads as loads
from agentrt._codec._decode import unsigned_allowed as unsigned_allowed
from agentrt._codec._encode import dumps as dumps
from agentrt._codec._extension import STORED_AS as STORED_AS
from agentrt._codec._extension import DecodeContext as DecodeContext
from agentrt._codec._extension import EncodeContext as EncodeContext
from agentrt._codec._extension import Location as Location
from agentrt._codec._extension import extension_for_type as extension_for_type
from agentrt._codec._extension import register_extension as register_extension
from agentrt._codec._format import CONTEXT_FORMAT_VERSION as CONTEXT_FORMAT_VERSION
from agentrt._codec._format import FLAG_CLOUDPICKLE as FLAG_CLOUDPICKLE
from agentrt._codec._format import FLAG_REFERENCING as FLAG_REFERENCING
from agentrt._codec._format import FORMAT_VERSION as FORMAT_VERSION
from agentrt._codec._format import PREFIX_SIZE_BYTES as PREFIX_SIZE_BYTES
from agentrt._codec._format import READABLE_VERSIONS as READABLE_VERSIONS
from agentrt._codec._format import Bind as Bind
from agentrt._codec._format import CodeIdentity as CodeIdentity
from agentrt._codec._format import Header as Header
from agentrt._codec._format import read_header as read_header
from agentrt._codec._format import reseal as reseal
from agentrt._codec._format import unpack as unpack
from agentrt._codec._plain import NOT_PLAIN as NOT_PLAIN
from agentrt._codec._plain import dumps_plain as dumps_plain
from agentrt._codec._plain import dumps_plain_with_copy as dumps_plain_with_copy
from agentrt._codec._plain import loads_plain as loads_plain
from agentrt._codec._reconstruct import RECONSTRUCTORS as RECONSTRUCTORS
from agentrt._codec._reconstruct import DecodeContext as ReconstructContext
from agentrt._codec._reconstruct import _apply_extension as apply_extension
from agentrt._codec._refs import MISSING as MISSING
from agentrt._codec._refs import class_dict as class_dict
from agentrt._codec._refs import find_module as find_module
from agentrt._codec._refs import imported_module as imported_module
from agentrt._codec._refs import lookup as lookup
from agentrt._codec._refs import module_dict as module_dict
from agentrt._codec._reopen import _REGISTRY as REOPENABLE_REGISTRY
from agentrt._codec._reopen import reopenable as reopenable
from agentrt._codec._requirement import code_requirement as code_requirement
from agentrt._codec._requirement import lacking_code as lacking_code
from agentrt._codec._scan import check_payload as check_payload
from agentrt._codec._serializable import is_serializable as is_serializable
from agentrt._codec._serializable import serializable as serializable

__all__ = [
    "CONTEXT_FORMAT_VERSION",
    "DRY",
    "DRY_TOKEN",
    "FLAG_CLOUDPICKLE",
    "FLAG_REFERENCING",
    "FORMAT_VERSION",
    "MISSING",
    "NOT_PLAIN",
    "PREFIX_SIZE_BYTES",
    "READABLE_VERSIONS",
    "RECONSTRUCTORS",
    "REOPENABLE_REGISTRY",
    "STORED_AS",
    "STRICT",
    "VERIFIED",
    "Bind",
    "CodeIdentity",
    "DecodeContext",
    "EncodeContext",
    "Location",
    "ReconstructContext",
    "Requirement",
    "RestrictedUnpickler",
    "apply_extension",
    "check_bounds",
    "check_payload",
    "class_dict",
    "code_digest",
    "code_requirement",
    "codes_by_qualname",
    "describe_error",
    "dumps",
    "dumps_plain",
    "dumps_plain_with_copy",
    "extension_for_type",
    "find_module",
    "imported_module",
    "is_serializable",
    "lacking_code",
    "loads",
    "loads_plain",
    "lookup",
    "module_dict",
    "read_header",
    "register_extension",
    "reopenable",
    "reseal",
    "resolve_code",
    "serializable",
    "short",
    "unpack",
    "unpickle_payload",
    "unsigned_allowed",
]
