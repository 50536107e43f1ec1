"""Decode bounds: what an unauthenticated payload may cost before the C unpickler sees it.

Pickle builds its objects iteratively, but what it builds can still hurt the
process afterwards: a tuple nested 200 000 deep crashes CPython when it is
hashed (tuple hashing recurses in C), a million nested ``enumerate`` objects
crash it when they are freed, 543 bytes of tuples sharing each other take hours
to hash (every memo reference expands again), and one byte of ``EMPTY_SET``
becomes 200 bytes of memory.  So an unauthenticated payload is first *walked*:
the opcodes are simulated into a graph of node weights and edges (no object is
built), and the load is refused with ``CorruptBlob`` unless

* every object is nested at most :data:`MAX_DEPTH` containers / reconstructor
  calls deep (cycles count once);
* the *expanded* size -- every shared reference counted as often as it is
  reached, which is what ``repr``, hashing and comparison pay -- stays under
  :func:`expanded_limit`;
* the *hashing work* -- each time a tuple or a big int is placed into a
  container or handed to a reconstructor, its expanded size (tuple and int
  hashes are not cached) -- stays under :func:`hash_limit`;
* the estimated memory of the objects it builds stays under :func:`memory_limit`
  (``MEMORY_BASE_BYTES + MEMORY_FACTOR * len(blob)``);
* no set, frozenset or dict -- nor a list or tuple handed to a reconstructor, which
  may make one of it (a set iterator, a Counter) -- holds more than
  :data:`MAX_SHARED_HASH` distinct keys with one hash value.  Int, float and tuple
  hashes are not randomized: ``n`` and ``n + (2**61 - 1)`` hash alike, so 20 000
  such ints make building one set take 10 s (every insert compares with all the
  others).  The walk knows the numbers, and builds the tuples of them (and the
  argument tuples of reconstructor calls, whose objects usually hash by them), so
  it counts keys per hash before the unpickler builds anything.  Strings and bytes
  hash with a per-process random key, so their collisions cannot be planned.

The walk is linear in the payload (one Python step per opcode, one per edge).
It runs after ``_scan.check_payload`` has checked that only the opcodes agentrt
writes occur, so the opcode set here is the same small one.  Authenticated
blobs skip it: only a key holder could have written them, and a key holder can
resume any code anyway (see docs/blob-format.md, "Threat model").
"""

from __future__ import annotations

import struct
from typing import Any, Final  # Any: the pickle stack holds any value

from agentrt.exceptions import CorruptBlob

#: containers / reconstructor calls nested inside each other (hashing, freeing and repr recurse in C)
MAX_DEPTH: Final = 2000
#: memory the decoded objects may take: MEMORY_BASE_BYTES + MEMORY_FACTOR x blob size
MEMORY_BASE_BYTES: Final = 16 * 1024 * 1024
MEMORY_FACTOR: Final = 20
#: expanded nodes (shared references counted each time): EXPANDED_BASE + EXPANDED_FACTOR x blob size
EXPANDED_BASE: Final = 4_000_000
EXPANDED_FACTOR: Final = 64
#: hashing steps of tuples and ints placed into containers: HASH_BASE + HASH_FACTOR x blob size
HASH_BASE: Final = 4_000_000
HASH_FACTOR: Final = 32
#: distinct keys of one set / dict (or of one list or tuple handed to a reconstructor) sharing a hash
MAX_SHARED_HASH: Final = 16

_SATURATE = 1 << 62

# node kinds
_ATOM, _BIGINT, _STR, _LIST, _DICT, _SET, _FROZENSET, _TUPLE, _CALL, _GLOBAL = range(10)
#: estimated bytes of each kind of object and of each item it holds (CPython 64-bit, GC header included)
_BASE_BYTES = {
    _ATOM: 32,
    _BIGINT: 32,
    _STR: 64,
    _LIST: 72,
    _DICT: 80,
    _SET: 232,
    _FROZENSET: 232,
    _TUPLE: 56,
    _CALL: 256,  # a reconstructed object: an instance, an iterator, a frame's coroutine...
    _GLOBAL: 0,  # a reconstructor entry point: exists already
}
_ITEM_BYTES = {_LIST: 9, _DICT: 48, _SET: 40, _FROZENSET: 40, _TUPLE: 8, _CALL: 16}
#: what the walk itself holds per node it makes and per edge, so that walk + objects stay in the bound
_WALK_NODE_BYTES = 160
_WALK_EDGE_BYTES = 16
_HASHED_KINDS = (_TUPLE, _BIGINT)


def memory_limit(blob_size: int) -> int:
    return MEMORY_BASE_BYTES + MEMORY_FACTOR * blob_size


def expanded_limit(blob_size: int) -> int:
    return EXPANDED_BASE + EXPANDED_FACTOR * blob_size


def hash_limit(blob_size: int) -> int:
    return HASH_BASE + HASH_FACTOR * blob_size


# A node of the walk's graph is a list (a list display costs no call, unlike an instance):
#   [kind, weight, children, text, value, mark, depth, expanded, hashed]
# ``children``: a list of nodes and of the int / float values the walk holds by value (see below),
# or None; ``text``: the raw bytes of a short string (what STACK_GLOBAL names); ``value``: what a big
# int, or a tuple / frozenset / reconstructor call whose parts all have one, hashes by (``_UNKNOWN``
# otherwise), set by :func:`_check_collisions`; ``mark``: 0 unvisited, 1 on the path of
# :func:`_measure`'s depth-first walk, 2 measured (then depth, expanded and hashed are set).
#
# Ints and floats that fit an opcode's fixed width are not nodes: the walk holds their values
# (what the key-collision check hashes).
_KIND, _WEIGHT, _CHILDREN, _TEXT, _VALUE, _MARK_OF, _DEPTH, _EXPANDED, _HASHED = range(9)
_FRESH, _ON_PATH, _MEASURED = 0, 1, 2
_Node = list  # the type of a node, for ``type(x) is _Node``

_ATOM_NODE: list[Any] = [_ATOM, 1, None, None, None, _FRESH, 0, 0, 0]  # None / True / False: shared
_UNKNOWN: Any = object()  # a value the walk does not know (its hash is not the attacker's to plan)
_FLOAT = struct.Struct(">d")
_EMPTY_KIND = {0x5D: _LIST, 0x7D: _DICT, 0x8F: _SET, 0x29: _TUPLE}
#: opcode -> width of its length field: BINUNICODE, BINBYTES, BINUNICODE8, BINBYTES8, BYTEARRAY8,
#: SHORT_BINBYTES, LONG1, LONG4
_LONG_STRING = {0x58: 4, 0x42: 4, 0x8D: 8, 0x8E: 8, 0x96: 8, 0x43: 1, 0x8A: 1, 0x8B: 4}
_NODE_BYTES = {kind: size + _WALK_NODE_BYTES for kind, size in _BASE_BYTES.items()}
_ITEM_EDGE_BYTES = {kind: size + _WALK_EDGE_BYTES for kind, size in _ITEM_BYTES.items()}
_STATE_NAME = b"state"


def _corrupt(what: str) -> CorruptBlob:
    return CorruptBlob(f"blob payload {what}; it was modified or was not written by agentrt")


def _pop_mark(stack: list[Any], marks: list[int]) -> list[Any]:
    if not marks:
        raise _corrupt("pops a MARK it never set")
    start = marks.pop()
    items = stack[start:]
    del stack[start:]
    return items


def _pop(stack: list[Any], marks: list[int]) -> Any:
    if not stack or (marks and len(stack) <= marks[-1]):
        raise _corrupt("pops from an empty stack")
    return stack.pop()


def _top(stack: list[Any], marks: list[int], kind: int) -> list[Any]:
    if not stack or (marks and len(stack) <= marks[-1]):
        raise _corrupt("adds items to nothing")
    node = stack[-1]
    if type(node) is not _Node or node[_KIND] != kind:
        raise _corrupt("adds items to an object that is not a list, dict or set")
    return node


def _extend(node: list[Any], items: list[Any]) -> None:
    if node[_CHILDREN] is None:
        node[_CHILDREN] = list(items)
    else:
        node[_CHILDREN].extend(items)


def _walk(payload: bytes, max_memory: int) -> list[list[Any]]:
    """Simulate the payload's opcodes (already allowlisted by ``_scan``); return the container nodes.

    Atoms share one node (only their weight matters); containers and reconstructor
    calls get their own.  The memory estimate is kept as the walk goes, so a payload
    that would build too much is refused before it is walked to the end.  The opcodes
    are tested commonest first (memo writes, short strings, small ints, memo reads).
    """
    nodes: list[list[Any]] = []
    stack: list[Any] = []
    marks: list[int] = []
    memo: list[Any] = []
    position = 2  # after PROTO 5 (checked by _scan)
    size = len(payload)
    new = nodes.append
    push = stack.append
    remember = memo.append
    memory = 0
    while position < size:
        op = payload[position]
        position += 1
        if op == 0x94:  # MEMOIZE (no memory: the memo's own entry is the edge of its read)
            if not stack:
                raise _corrupt("memoizes nothing")
            remember(stack[-1])
            continue
        if op == 0x8C:  # SHORT_BINUNICODE
            length = payload[position]
            end = position + 1 + length
            push(
                [_STR, 1 + length // 64, None, payload[position + 1 : end] if length <= 64 else None, None, 0]
            )
            position = end
            memory += 64 + length + _WALK_NODE_BYTES
        elif op == 0x4B:  # BININT1: the value itself stands for the atom
            push(payload[position])
            position += 1
            memory += 32 + _WALK_EDGE_BYTES
        elif op == 0x68:  # BINGET
            index = payload[position]
            position += 1
            if index >= len(memo):
                raise _corrupt(f"reads memo entry {index}, which was never written")
            push(memo[index])
            memory += _WALK_EDGE_BYTES
        elif op == 0x28:  # MARK
            marks.append(len(stack))
            continue
        elif op == 0x52:  # REDUCE
            args = _pop(stack, marks)
            func = _pop(stack, marks)
            if (
                type(args) is not _Node
                or args[_KIND] != _TUPLE
                or type(func) is not _Node
                or func[_KIND] != _GLOBAL
            ):
                raise _corrupt("calls something that is not an agentrt reconstructor with a tuple")
            arguments = args[_CHILDREN] or []
            first = arguments[0] if len(arguments) == 2 else None
            if func[_TEXT] == _STATE_NAME and type(first) is _Node and first[_KIND] == _CALL:
                # state(obj, contents): the contents end up inside obj
                _extend(first, [arguments[1]])
                push(_ATOM_NODE)
            else:
                node = [_CALL, 1, [args], func[_TEXT], None, 0]
                new(node)
                push(node)
                memory += _NODE_BYTES[_CALL]
        elif op in (0x85, 0x86, 0x87, 0x74, 0x91):  # TUPLE1, TUPLE2, TUPLE3, TUPLE, FROZENSET
            if op == 0x74 or op == 0x91:
                items = _pop_mark(stack, marks)
            else:
                count = op - 0x84
                if len(stack) < count or (marks and len(stack) - count < marks[-1]):
                    raise _corrupt("builds a tuple from an empty stack")
                items = stack[-count:]
                del stack[-count:]
            kind = _FROZENSET if op == 0x91 else _TUPLE
            node = [kind, 1, items, None, None, 0]
            new(node)
            push(node)
            memory += _NODE_BYTES[kind] + _ITEM_EDGE_BYTES[kind] * len(items)
        elif op == 0x4E or op == 0x88 or op == 0x89:  # NONE, NEWTRUE, NEWFALSE
            push(_ATOM_NODE)
            memory += 32 + _WALK_EDGE_BYTES
        elif op == 0x47:  # BINFLOAT
            push(_FLOAT.unpack_from(payload, position)[0])
            position += 8
            memory += 32 + _WALK_EDGE_BYTES
        elif op == 0x4A or op == 0x4D:  # BININT, BININT2
            width = 4 if op == 0x4A else 2
            push(int.from_bytes(payload[position : position + width], "little", signed=op == 0x4A))
            position += width
            memory += 32 + _WALK_EDGE_BYTES
        elif op in _EMPTY_KIND:  # EMPTY_LIST, EMPTY_DICT, EMPTY_SET, EMPTY_TUPLE
            kind = _EMPTY_KIND[op]
            node = [kind, 1, None, None, None, 0]
            new(node)
            push(node)
            memory += _NODE_BYTES[kind]
        elif op == 0x65 or op == 0x75 or op == 0x90:  # APPENDS, SETITEMS, ADDITEMS
            items = _pop_mark(stack, marks)
            kind = _LIST if op == 0x65 else _DICT if op == 0x75 else _SET
            if kind == _DICT and len(items) % 2:
                raise _corrupt("sets a dict item without a value")
            _extend(_top(stack, marks, kind), items)
            memory += _ITEM_EDGE_BYTES[kind] * len(items)
        elif op == 0x93:  # STACK_GLOBAL
            name = _pop(stack, marks)
            _pop(stack, marks)
            push([_GLOBAL, 0, None, name[_TEXT] if type(name) is _Node else None, None, 0])
        elif op == 0x30:  # POP
            if stack and not (marks and len(stack) <= marks[-1]):
                stack.pop()
            elif marks:
                marks.pop()
            else:
                raise _corrupt("pops from an empty stack")
            continue
        elif op in _LONG_STRING:  # BINUNICODE(8), BINBYTES(8), BYTEARRAY8, SHORT_BINBYTES, LONG1, LONG4
            width = _LONG_STRING[op]
            length = int.from_bytes(payload[position : position + width], "little")
            position += width + length
            if op == 0x8A or op == 0x8B:
                number = int.from_bytes(payload[position - length : position], "little", signed=True)
                push([_BIGINT, 1 + length // 8, None, None, number, 0])
            else:
                push([_STR, 1 + length // 64, None, None, None, 0])
            memory += 64 + length + _WALK_NODE_BYTES
        elif op == 0x61:  # APPEND
            item = _pop(stack, marks)
            _extend(_top(stack, marks, _LIST), [item])
            memory += _ITEM_EDGE_BYTES[_LIST]
        elif op == 0x73:  # SETITEM
            value = _pop(stack, marks)
            key = _pop(stack, marks)
            _extend(_top(stack, marks, _DICT), [key, value])
            memory += _ITEM_EDGE_BYTES[_DICT] * 2
        elif op == 0x6A:  # LONG_BINGET
            index = int.from_bytes(payload[position : position + 4], "little")
            position += 4
            if index >= len(memo):
                raise _corrupt(f"reads memo entry {index}, which was never written")
            push(memo[index])
            continue
        elif op == 0x31:  # POP_MARK
            _pop_mark(stack, marks)
            continue
        elif op == 0x95:  # FRAME
            position += 8
            continue
        elif op == 0x2E:  # STOP
            if len(stack) != 1 or marks:
                raise _corrupt("ends with a malformed stack")
            _check_memory(memory, max_memory)
            for node in nodes:  # the measuring fields (see above)
                node += (0, 0, 0)
            return nodes
        else:  # pragma: no cover - _scan admits only the opcodes above
            raise _corrupt(f"uses pickle opcode {op:#04x}")
        if memory > max_memory:
            _check_memory(memory, max_memory)
    raise _corrupt("ends without a STOP opcode")


def _kind(item: Any) -> int:
    return item[_KIND] if type(item) is _Node else _ATOM


def _check_memory(memory: int, max_memory: int) -> None:
    if memory > max_memory:
        raise CorruptBlob(
            f"blob would build over {max_memory // 1_000_000} MB of objects, over the decode bound "
            f"({MEMORY_BASE_BYTES // 1_000_000} MB + {MEMORY_FACTOR} x its size); "
            "it was not written by agentrt"
        )


def check_bounds(payload: bytes, blob_size: int) -> None:
    """Raise ``CorruptBlob`` unless decoding ``payload`` stays within the decode bounds."""
    nodes = _walk(payload, memory_limit(blob_size))
    _measure(nodes, blob_size)
    _check_collisions(nodes)  # after _measure: hashing the walk's values is within the hashing bound


def _too_deep() -> CorruptBlob:
    return CorruptBlob(
        f"blob nests objects more than {MAX_DEPTH} deep, over the decode bound; it was not written by agentrt"
    )


def _measure(nodes: list[list[Any]], blob_size: int) -> None:
    """Depth, expanded size and hashing work over the graph (iterative: no recursion on blob data).

    A node is measured once its children are (depth-first); a child on the current path closes a
    cycle and counts once; a child without children of its own that was never measured as a node
    counts its own weight (an atom, a string, an int held by value counts 1).
    """
    hash_work = 0
    max_expanded = expanded_limit(blob_size)
    max_hash = hash_limit(blob_size)
    max_todo = 2 * MAX_DEPTH + 2
    for start in nodes:
        if start[_MARK_OF] == _MEASURED:
            continue
        todo: list[tuple[list[Any], int]] = [(start, 0)]
        while todo:
            node, child_index = todo.pop()
            children = node[_CHILDREN] or ()
            if child_index == 0:
                node[_MARK_OF] = _ON_PATH
            count = len(children)
            while child_index < count:
                child = children[child_index]
                if type(child) is _Node and child[_MARK_OF] == _FRESH and child[_CHILDREN]:
                    todo.append((node, child_index))
                    todo.append((child, 0))
                    if len(todo) > max_todo:
                        raise _too_deep()
                    break
                child_index += 1
            else:
                node[_MARK_OF] = _FRESH  # off the path (a child that is the node itself counts its weight)
                node_depth = 0
                node_expanded = node_hashed = node[_WEIGHT]
                for child in children:
                    if type(child) is not _Node:  # an int or float the walk holds by value
                        node_expanded += 1
                        node_hashed += 1
                        continue
                    mark = child[_MARK_OF]
                    if mark == _ON_PATH:  # a cycle: reached once, expands no further
                        node_expanded += 1
                        node_hashed += 1
                        continue
                    if mark == _MEASURED:
                        if child[_DEPTH] > node_depth:
                            node_depth = child[_DEPTH]
                        node_expanded += child[_EXPANDED]
                        child_hashed = child[_HASHED]
                    else:
                        node_expanded += child[_WEIGHT]
                        child_hashed = child[_WEIGHT]
                    if child[_KIND] == _TUPLE or child[_KIND] == _BIGINT:
                        hash_work += child_hashed
                        node_hashed += child_hashed
                    else:
                        node_hashed += 1
                node[_MARK_OF] = _MEASURED
                node[_DEPTH] = node_depth + 1
                if node_depth + 1 > MAX_DEPTH:
                    raise _too_deep()
                node[_EXPANDED] = min(node_expanded, _SATURATE)
                node[_HASHED] = min(node_hashed, _SATURATE)
                if node_expanded > max_expanded:
                    raise CorruptBlob(
                        f"blob's shared references expand to over {max_expanded} objects, over the decode "
                        f"bound ({EXPANDED_BASE} + {EXPANDED_FACTOR} x its size); "
                        "it was not written by agentrt"
                    )
                if hash_work > max_hash:
                    raise CorruptBlob(
                        f"blob's dictionary keys and set members would take over {max_hash} hashing "
                        f"steps, over the decode bound ({HASH_BASE} + {HASH_FACTOR} x its size); "
                        "it was not written by agentrt"
                    )


def _check_collisions(nodes: list[list[Any]]) -> None:
    """Refuse keys planned to share one hash (see the module docstring).

    Values first: a tuple, frozenset or call is made from objects made before it, so
    one pass in creation order computes them all (a frozenset's members are checked
    before it is built).  Then the keys of every set, dict and reconstructor argument,
    which may have been filled after later objects were made.
    """
    for node in nodes:
        kind = node[_KIND]
        if kind == _FROZENSET:
            _check_keys(node[_CHILDREN] or [])
        if kind in (_TUPLE, _FROZENSET, _CALL):
            node[_VALUE] = _value_of(node)
    for node in nodes:
        kind = node[_KIND]
        children = node[_CHILDREN]
        if not children:
            continue
        if kind == _SET:
            _check_keys(children)
        elif kind == _DICT:
            _check_keys(children[0::2])
        elif kind == _CALL:
            for part in children:  # the argument tuple, then any state set on the object
                if type(part) is _Node and part[_KIND] == _TUPLE:
                    for argument in part[_CHILDREN] or ():
                        _check_sequence(argument)


def _check_sequence(argument: Any) -> None:
    """A list or tuple a reconstructor gets: its items, and the keys of its (key, value) pairs."""
    if type(argument) is not _Node or argument[_KIND] not in (_LIST, _TUPLE) or not argument[_CHILDREN]:
        return
    items = argument[_CHILDREN]
    if len(items) <= MAX_SHARED_HASH:
        return  # too few keys to hold more than MAX_SHARED_HASH that collide
    _check_keys(items)
    pairs = [
        pair[_CHILDREN][0]
        for pair in items
        if type(pair) is _Node and pair[_KIND] == _TUPLE and len(pair[_CHILDREN] or ()) == 2
    ]
    _check_keys(pairs)


def _value_of(node: list[Any]) -> Any:
    """The value a tuple / frozenset node builds, or what a call's object hashes by (its arguments).

    (:func:`_value` of each child, inlined: only big ints, tuples, frozensets and calls hold a
    value, and one unknown part makes the whole unknown.)
    """
    values = []
    for child in node[_CHILDREN] or ():
        if type(child) is _Node:
            child = child[_VALUE]
            if child is None or child is _UNKNOWN:
                return _UNKNOWN
        values.append(child)
    if node[_KIND] == _TUPLE:
        return tuple(values)
    if node[_KIND] == _FROZENSET:
        return frozenset(values)  # its members were checked first
    return (node[_TEXT], *values)


def _value(item: Any) -> Any:
    """What ``item`` hashes by, if the walk knows it: an int or float it holds, or a node's value
    (set only on big ints, tuples, frozensets and calls); ``_UNKNOWN`` otherwise."""
    if type(item) is not _Node:
        return item
    value = item[_VALUE]
    return _UNKNOWN if value is None else value


def _check_keys(keys: list[Any]) -> None:
    if len(keys) <= MAX_SHARED_HASH:
        return  # too few keys to hold more than MAX_SHARED_HASH that collide
    groups: dict[int, list[Any]] = {}
    for key in keys:
        value = _value(key)
        if value is _UNKNOWN:
            continue
        try:
            digest = hash(value)
        except TypeError:  # unhashable: the unpickler refuses it itself
            continue
        group = groups.get(digest)
        if group is None:
            groups[digest] = [value]
        elif not any(other is value or other == value for other in group):
            group.append(value)
            if len(group) > MAX_SHARED_HASH:
                raise CorruptBlob(
                    f"blob's set or dict keys collide: more than {MAX_SHARED_HASH} distinct keys share "
                    "one hash value, which would make building the container take quadratic time "
                    "(a decode bound); it was not written by agentrt"
                )


def short(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters without building the whole repr first.

    Strings and bytes are cut before ``repr``; anything else is named by its type only
    (a blob-built container's repr can be gigabytes long, or recurse).
    """
    if type(value) is str or type(value) is bytes:
        text = repr(value[:limit])
        return text if len(value) <= limit else text + "..."
    if type(value) in (int, float, bool) or value is None:
        if type(value) is int and value.bit_length() > 128:
            return f"<int of {value.bit_length()} bits>"
        return repr(value)
    return f"<{type(value).__name__}>"


def describe_error(exc: BaseException, limit: int = 200) -> str:
    """``Type: message`` of an error met while decoding, cut to ``limit`` without formatting blob data.

    ``str(KeyError(key))`` is ``repr(key)``, and the key may be a blob-built graph whose
    repr is gigabytes long: arguments other than strings are named by type only.
    """
    args = exc.args if type(exc.args) is tuple else ()
    if all(type(arg) is str for arg in args):
        text = ", ".join(arg[:limit] for arg in args)
    else:
        text = ", ".join(short(arg, limit) for arg in args[:4])
    text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[:limit] + "..."


__all__ = [
    "MAX_DEPTH",
    "MAX_SHARED_HASH",
    "check_bounds",
    "describe_error",
    "expanded_limit",
    "hash_limit",
    "memory_limit",
    "short",
]
