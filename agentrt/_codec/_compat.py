"""Version facts of the running interpreter, in one place.

The blob header records the Python major/minor that wrote it (bytecode and code
objects are only meaningful within one minor version), so the codec needs these
numbers; nothing else in ``_codec`` looks at ``sys.version_info``.
"""

from __future__ import annotations

import sys

PYTHON_MAJOR: int = sys.version_info[0]
PYTHON_MINOR: int = sys.version_info[1]

#: ``type.__flags__`` bit of classes created by a ``class`` statement (not C types).
TPFLAGS_HEAPTYPE: int = 1 << 9

#: Py_TPFLAGS_IMMUTABLETYPE: a class whose attributes cannot be set -- C types, static or heap
#: (extension modules with multi-phase init make heap types of them from 3.12 on); never a
#: class defined by a ``class`` statement
TPFLAGS_IMMUTABLETYPE = 1 << 8
