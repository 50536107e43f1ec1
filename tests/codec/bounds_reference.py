"""The decode-bounds walk as it was before it was rewritten for speed (tests only): the reference.

agentrt/_codec/_bounds.py walks a payload with list-based nodes, dispatches the commonest
opcodes first and measures in place; this is the earlier, object-based walk, kept so that
tests/codec/test_bounds_reference.py can show that both refuse exactly the same payloads, with
the same messages.  The one difference is documented there: the earlier walk decoded short
strings (refusing invalid UTF-8 itself), the new one leaves that to the unpickler.
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


class _Node:
    """One object the payload would build: its kind, own weight, children and (for strings) text.

    Ints and floats that fit an opcode's fixed width are not nodes: the walk holds
    their values (what the key-collision check hashes).  A big int keeps its value
    in ``value``; so does a tuple, a frozenset or a reconstructor call whose parts
    all have one (``_UNKNOWN`` otherwise), once :func:`_check_collisions` computed it.
    """

    __slots__ = ("children", "kind", "text", "value", "weight")

    def __init__(self, kind: int, weight: int = 1, text: str | None = None, value: Any = None) -> None:
        self.kind = kind
        self.weight = weight
        self.children: list[Any] | None = None
        self.text = text
        self.value = value


_MARK = object()
_ATOM_NODE = _Node(_ATOM)
_ATOM_WIDTH = {0x4E: 0, 0x88: 0, 0x89: 0}  # NONE, NEWTRUE, NEWFALSE
_UNKNOWN: Any = object()  # a value the walk does not know (its hash is not the attacker's to plan)
_FLOAT = struct.Struct(">d")
_EMPTY_KIND = {0x5D: _LIST, 0x7D: _DICT, 0x8F: _SET, 0x29: _TUPLE}
#: opcode -> width of its length field: BINUNICODE, BINBYTES, BINUNICODE8, BINBYTES8, BYTEARRAY8,
#: SHORT_BINBYTES, LONG1, LONG4
_LONG_STRING = {0x58: 4, 0x42: 4, 0x8D: 8, 0x8E: 8, 0x96: 8, 0x43: 1, 0x8A: 1, 0x8B: 4}


def _corrupt(what: str) -> CorruptBlob:
    return CorruptBlob(f"blob payload {what}; it was modified or was not written by agentrt")


def _pop_mark(stack: list[object], marks: list[int]) -> list[_Node]:
    if not marks:
        raise _corrupt("pops a MARK it never set")
    start = marks.pop()
    items = stack[start:]
    del stack[start:]
    return items  # type: ignore[return-value]  # the stack holds only _Node values above a mark


def _pop(stack: list[object], marks: list[int]) -> _Node:
    if not stack or (marks and len(stack) <= marks[-1]):
        raise _corrupt("pops from an empty stack")
    return stack.pop()  # type: ignore[return-value]  # the stack holds only _Node values


def _top(stack: list[object], marks: list[int], *kinds: int) -> _Node:
    if not stack or (marks and len(stack) <= marks[-1]):
        raise _corrupt("adds items to nothing")
    node = stack[-1]
    if not isinstance(node, _Node) or node.kind not in kinds:
        raise _corrupt("adds items to an object that is not a list, dict or set")
    return node


def _extend(node: _Node, items: list[_Node]) -> None:
    if node.children is None:
        node.children = list(items)
    else:
        node.children.extend(items)


def _container(kind: int, items: list[_Node]) -> _Node:
    node = _Node(kind)
    node.children = items
    return node


def _walk(payload: bytes, max_memory: int) -> list[_Node]:
    """Simulate the payload's opcodes (already allowlisted by ``_scan``); return the container nodes.

    Atoms share one node (only their weight matters); containers and reconstructor
    calls get their own.  The memory estimate is kept as the walk goes, so a payload
    that would build too much is refused before it is walked to the end.
    """
    nodes: list[_Node] = []
    stack: list[Any] = []
    marks: list[int] = []
    memo: list[_Node] = []
    position = 2  # after PROTO 5 (checked by _scan)
    size = len(payload)
    new = nodes.append
    push = stack.append
    memory = 0
    base = _BASE_BYTES
    while position < size:
        op = payload[position]
        position += 1
        if op == 0x68:  # BINGET
            index = payload[position]
            position += 1
            if index >= len(memo):
                raise _corrupt(f"reads memo entry {index}, which was never written")
            push(memo[index])
            memory += _WALK_EDGE_BYTES
        elif op == 0x94:  # MEMOIZE
            if not stack or stack[-1] is _MARK:
                raise _corrupt("memoizes nothing")
            memo.append(stack[-1])
        elif op == 0x8C:  # SHORT_BINUNICODE
            length = payload[position]
            text = None
            if length <= 64:
                try:
                    text = payload[position + 1 : position + 1 + length].decode("utf-8", "surrogatepass")
                except UnicodeDecodeError:
                    raise _corrupt("holds a string that is not UTF-8") from None
            position += 1 + length
            push(_Node(_STR, 1 + length // 64, text))
            memory += 64 + length + _WALK_NODE_BYTES
        elif op == 0x4B:  # BININT1: the value itself stands for the atom (see _Node)
            push(payload[position])
            position += 1
            memory += 32 + _WALK_EDGE_BYTES
        elif op == 0x4A or op == 0x4D:  # BININT, BININT2
            width = 4 if op == 0x4A else 2
            push(int.from_bytes(payload[position : position + width], "little", signed=op == 0x4A))
            position += width
            memory += 32 + _WALK_EDGE_BYTES
        elif op == 0x47:  # BINFLOAT
            push(_FLOAT.unpack_from(payload, position)[0])
            position += 8
            memory += 32 + _WALK_EDGE_BYTES
        elif op in _ATOM_WIDTH:  # NONE, NEWTRUE, NEWFALSE
            push(_ATOM_NODE)
            memory += 32 + _WALK_EDGE_BYTES
        elif op in _EMPTY_KIND:  # EMPTY_LIST, EMPTY_DICT, EMPTY_SET, EMPTY_TUPLE
            node = _Node(_EMPTY_KIND[op])
            new(node)
            push(node)
            memory += base[node.kind] + _WALK_NODE_BYTES
        elif op == 0x28:  # MARK
            marks.append(len(stack))
        elif op in (0x65, 0x75, 0x90):  # APPENDS, SETITEMS, ADDITEMS
            items = _pop_mark(stack, marks)
            kind = _LIST if op == 0x65 else _DICT if op == 0x75 else _SET
            if kind == _DICT and len(items) % 2:
                raise _corrupt("sets a dict item without a value")
            _extend(_top(stack, marks, kind), items)
            memory += (_ITEM_BYTES[kind] + _WALK_EDGE_BYTES) * len(items)
        elif op == 0x61:  # APPEND
            item = _pop(stack, marks)
            _extend(_top(stack, marks, _LIST), [item])
            memory += _ITEM_BYTES[_LIST] + _WALK_EDGE_BYTES
        elif op == 0x73:  # SETITEM
            value = _pop(stack, marks)
            key = _pop(stack, marks)
            _extend(_top(stack, marks, _DICT), [key, value])
            memory += (_ITEM_BYTES[_DICT] + _WALK_EDGE_BYTES) * 2
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
            node = _container(kind, items)
            new(node)
            push(node)
            memory += base[kind] + _WALK_NODE_BYTES + (_ITEM_BYTES[kind] + _WALK_EDGE_BYTES) * len(items)
        elif op == 0x52:  # REDUCE
            args = _pop(stack, marks)
            func = _pop(stack, marks)
            if _kind(args) != _TUPLE or _kind(func) != _GLOBAL:
                raise _corrupt("calls something that is not an agentrt reconstructor with a tuple")
            arguments = args.children or []
            if func.text == "state" and len(arguments) == 2 and _kind(arguments[0]) == _CALL:
                # state(obj, contents): the contents end up inside obj
                _extend(arguments[0], [arguments[1]])
                push(_ATOM_NODE)
            else:
                node = _container(_CALL, [args])
                node.text = func.text
                new(node)
                push(node)
                memory += base[_CALL] + _WALK_NODE_BYTES
        elif op == 0x93:  # STACK_GLOBAL
            name = _pop(stack, marks)
            _pop(stack, marks)
            push(_Node(_GLOBAL, 0, name.text if type(name) is _Node else None))
        elif op in _LONG_STRING:  # BINUNICODE(8), BINBYTES(8), BYTEARRAY8, SHORT_BINBYTES, LONG1, LONG4
            width = _LONG_STRING[op]
            length = int.from_bytes(payload[position : position + width], "little")
            position += width + length
            if op in (0x8A, 0x8B):
                number = int.from_bytes(payload[position - length : position], "little", signed=True)
                push(_Node(_BIGINT, 1 + length // 8, None, number))
            else:
                push(_Node(_STR, 1 + length // 64))
            memory += 64 + length + _WALK_NODE_BYTES
        elif op == 0x6A:  # LONG_BINGET
            index = int.from_bytes(payload[position : position + 4], "little")
            position += 4
            if index >= len(memo):
                raise _corrupt(f"reads memo entry {index}, which was never written")
            push(memo[index])
        elif op == 0x30:  # POP
            if stack and not (marks and len(stack) <= marks[-1]):
                stack.pop()
            elif marks:
                marks.pop()
            else:
                raise _corrupt("pops from an empty stack")
        elif op == 0x31:  # POP_MARK
            _pop_mark(stack, marks)
        elif op == 0x95:  # FRAME
            position += 8
        elif op == 0x2E:  # STOP
            if len(stack) != 1 or marks:
                raise _corrupt("ends with a malformed stack")
            _check_memory(memory, max_memory)
            return nodes
        else:  # pragma: no cover - _scan admits only the opcodes above
            raise _corrupt(f"uses pickle opcode {op:#04x}")
        if memory > max_memory:
            _check_memory(memory, max_memory)
    raise _corrupt("ends without a STOP opcode")


def _kind(item: Any) -> int:
    return item.kind if type(item) is _Node else _ATOM


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


def _measure(nodes: list[_Node], blob_size: int) -> None:
    """Depth, expanded size and hashing work over the graph (iterative: no recursion on blob data)."""
    depth: dict[int, int] = {}
    expanded: dict[int, int] = {}
    hashed: dict[int, int] = {}  # expanded size as far as hashing goes (tuples and ints)
    on_path: set[int] = set()
    hash_work = 0
    max_expanded = expanded_limit(blob_size)
    max_hash = hash_limit(blob_size)
    for start in nodes:
        if id(start) in depth:
            continue
        todo: list[tuple[_Node, int]] = [(start, 0)]
        while todo:
            node, child_index = todo.pop()
            key = id(node)
            children = node.children or ()
            if child_index == 0:
                on_path.add(key)
            while child_index < len(children):
                child = children[child_index]
                child_key = id(child)
                if (
                    type(child) is _Node
                    and child_key not in depth
                    and child_key not in on_path
                    and child.children
                ):
                    todo.append((node, child_index))
                    todo.append((child, 0))
                    if len(todo) > 2 * MAX_DEPTH + 2:
                        raise CorruptBlob(
                            f"blob nests objects more than {MAX_DEPTH} deep, over the decode bound; "
                            "it was not written by agentrt"
                        )
                    break
                child_index += 1
            else:
                on_path.discard(key)
                node_depth = 0
                node_expanded = node.weight
                node_hashed = node.weight
                for child in children:
                    if type(child) is not _Node:  # an int or float the walk holds by value
                        node_expanded += 1
                        node_hashed += 1
                        continue
                    child_key = id(child)
                    if child_key in on_path:  # a cycle: reached once, expands no further
                        node_expanded += 1
                        node_hashed += 1
                        continue
                    node_depth = max(node_depth, depth.get(child_key, 0))
                    node_expanded += expanded.get(child_key, child.weight)
                    if child.kind in _HASHED_KINDS:
                        child_hashed = hashed.get(child_key, child.weight)
                        hash_work += child_hashed
                        node_hashed += child_hashed
                    else:
                        node_hashed += 1
                depth[key] = node_depth + 1
                if node_depth + 1 > MAX_DEPTH:
                    raise CorruptBlob(
                        f"blob nests objects more than {MAX_DEPTH} deep, over the decode bound; "
                        "it was not written by agentrt"
                    )
                expanded[key] = min(node_expanded, _SATURATE)
                hashed[key] = min(node_hashed, _SATURATE)
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


def _check_collisions(nodes: list[_Node]) -> None:
    """Refuse keys planned to share one hash (see the module docstring).

    Values first: a tuple, frozenset or call is made from objects made before it, so
    one pass in creation order computes them all (a frozenset's members are checked
    before it is built).  Then the keys of every set, dict and reconstructor argument,
    which may have been filled after later objects were made.
    """
    for node in nodes:
        if node.kind == _FROZENSET:
            _check_keys(node.children or [])
        if node.kind in (_TUPLE, _FROZENSET, _CALL):
            node.value = _value_of(node)
    for node in nodes:
        kind = node.kind
        children = node.children or []
        if kind == _SET:
            _check_keys(children)
        elif kind == _DICT:
            _check_keys(children[0::2])
        elif kind == _CALL:
            for part in children:  # the argument tuple, then any state set on the object
                if _kind(part) == _TUPLE:
                    for argument in part.children or ():
                        _check_sequence(argument)


def _check_sequence(argument: Any) -> None:
    """A list or tuple a reconstructor gets: its items, and the keys of its (key, value) pairs."""
    if _kind(argument) not in (_LIST, _TUPLE) or not argument.children:
        return
    items = argument.children
    _check_keys(items)
    pairs = [pair.children[0] for pair in items if _kind(pair) == _TUPLE and len(pair.children or ()) == 2]
    _check_keys(pairs)


def _value_of(node: _Node) -> Any:
    """The value a tuple / frozenset node builds, or what a call's object hashes by (its arguments)."""
    values = [_value(child) for child in node.children or ()]
    if any(value is _UNKNOWN for value in values):
        return _UNKNOWN
    if node.kind == _TUPLE:
        return tuple(values)
    if node.kind == _FROZENSET:
        return frozenset(values)  # its members were checked first
    return (node.text, *values)


def _value(item: Any) -> Any:
    if type(item) is not _Node:
        return item
    if item.kind in (_BIGINT, _TUPLE, _FROZENSET, _CALL) and item.value is not None:
        return item.value
    return _UNKNOWN


def _check_keys(keys: list[Any]) -> None:
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
