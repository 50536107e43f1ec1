"""Opt-in cloudpickle payloads (``dumps(..., use_cloudpickle=True)``).

cloudpickle can hold values agentrt refuses (classes by value, arbitrary
objects), at the price that loading its payload may run any code.  Frames still
go through the registered extensions, so a cloudpickle blob restores the same
suspended chain; everything else is cloudpickle's business.  Imported only when
asked for, so agentrt does not pay for cloudpickle otherwise.
"""

from __future__ import annotations

import io
import types
from typing import Any  # Any: the codec encodes any Python object

import cloudpickle

from agentrt._codec import _wire
from agentrt._codec._codetable import PROTOCOL, CodeTable
from agentrt._codec._extension import extension_for_type
from agentrt._codec._reduce import reduce_extension


class CloudEncoder(CodeTable, cloudpickle.Pickler):  # type: ignore[misc]  # cloudpickle is untyped: its Pickler is Any
    """cloudpickle's pickler, with agentrt's extensions consulted first."""

    signed = False  # cloudpickle holds ordinary objects itself; agentrt's reducers never see them

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=PROTOCOL)

    def reducer_override(self, obj: Any) -> Any:
        ext = extension_for_type(type(obj))
        if ext is not None:
            return reduce_extension(self, ext, obj)
        if type(obj) is types.FunctionType and obj in _wire.ALL_PLACEHOLDERS:
            return NotImplemented  # a reconstructor's name: written as a global
        return super().reducer_override(obj)


def cloud_encoder(buffer: io.BytesIO) -> CloudEncoder:
    return CloudEncoder(buffer)
