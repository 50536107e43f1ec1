"""What each value-stack entry of a suspended frame *is*, from the bytecode alone.

A suspended frame's value stack is a list of anonymous slots.  To name them, two
small abstract interpretations run over the code object (with :mod:`dis`; no frame
internals are read here):

* **producers** -- forward from the function's entry over the control-flow graph
  (exception handlers included), a stack of *which instruction pushed each slot*.
  At the suspension this says "the iterator of the ``for`` at line 12"
  (``GET_ITER``), "the bound ``__exit__`` of the ``with`` at line 8"
  (``BEFORE_WITH``), "the exception saved by the ``except`` block" (``PUSH_EXC_INFO``).
* **consumers** -- forward from the resumption point along the straight-line path,
  which later instruction pops each slot, and as which operand: "argument 1 of
  ``print(...)``", "left operand of ``+``", "item 2 of the list being built".

Only net stack effects are published by :mod:`dis`, so the number of entries each
instruction *pops* comes from the table in :func:`_pops`; an instruction missing
from it is modelled as popping only what its net effect requires, which can
attribute a slot to an earlier instruction, never crash.  When the simulated depth
at the suspension disagrees with the checkpoint engine's, every slot gets the
generic label instead.
"""

from __future__ import annotations

import dis
from collections.abc import Sequence
from types import CodeType

import attrs

from agentrt._frames._liveness import _instructions
from agentrt._percode import PerCode

__all__ = ["InstrRef", "SlotInfo", "describe_slots"]

# Version facts, derived from the opcode table (conventions: never sys.version_info).
#: 3.11 splits a call into PRECALL + CALL and its dis stack effects split the pops oddly.
_HAS_PRECALL = "PRECALL" in dis.opmap
#: 3.13 (CALL_KW exists) pushes ``callable, self_or_NULL``;
#: 3.11/3.12 push ``NULL_or_method, callable_or_self``.
_CALLABLE_FIRST = "CALL_KW" in dis.opmap
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_UNCONDITIONAL = frozenset(
    {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"}
)
_TERMINAL = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
_MAX_CONSUMER_STEPS = 400  # instructions followed after the resumption point

_POPS_ONE = frozenset(
    {
        "UNARY_POSITIVE", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "TO_BOOL", "GET_ITER",
        "GET_AITER", "GET_AWAITABLE", "GET_YIELD_FROM_ITER", "LIST_TO_TUPLE", "FORMAT_SIMPLE",
        "CONVERT_VALUE", "ASYNC_GEN_WRAP", "CALL_INTRINSIC_1", "LOAD_FROM_DICT_OR_GLOBALS",
        "LOAD_FROM_DICT_OR_DEREF", "YIELD_VALUE", "STORE_FAST_LOAD_FAST", "PUSH_EXC_INFO",
        "BEFORE_WITH", "BEFORE_ASYNC_WITH", "LOAD_ATTR", "LOAD_METHOD", "UNPACK_SEQUENCE",
        "UNPACK_EX", "SEND", "CHECK_EXC_MATCH", "CHECK_EG_MATCH", "LIST_APPEND", "SET_ADD",
        "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "POP_TOP", "STORE_FAST",
        "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "RETURN_VALUE", "POP_EXCEPT",
    }
)  # fmt: skip
_POPS_TWO = frozenset(
    {
        "BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "FORMAT_WITH_SPEC",
        "CALL_INTRINSIC_2", "END_SEND", "IMPORT_NAME", "SET_FUNCTION_ATTRIBUTE", "MAP_ADD",
        "STORE_ATTR", "DELETE_SUBSCR", "STORE_FAST_STORE_FAST",
    }
)  # fmt: skip
_POPS_THREE = frozenset({"BINARY_SLICE", "LOAD_SUPER_ATTR", "MATCH_CLASS", "CLEANUP_THROW", "STORE_SUBSCR"})
_BUILD_N = frozenset({"BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"})
# Instructions that use a slot below the top in place (the slot stays where it is).
_PEEK_TARGET = {
    "LIST_APPEND": 1,
    "SET_ADD": 1,
    "LIST_EXTEND": 1,
    "SET_UPDATE": 1,
    "DICT_UPDATE": 1,
    "DICT_MERGE": 1,
    "MAP_ADD": 2,
}
_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION_EX"})
_BINARY = frozenset({"BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP"})


@attrs.frozen
class InstrRef:
    """One instruction of the agent's own code, as shown in dumps."""

    opname: str
    argrepr: str
    offset_bytes: int
    lineno: int | None

    @classmethod
    def of(cls, instr: dis.Instruction) -> InstrRef:
        lineno = instr.positions.lineno if instr.positions else None
        return cls(instr.opname, instr.argrepr, instr.offset, lineno)


@attrs.frozen
class SlotInfo:
    """What one value-stack slot is, as far as the bytecode tells.

    ``role`` is a stable key (``awaited``, ``for_iterator``, ``async_for_iterator``,
    ``with_exit``, ``async_with_exit``, ``call_callable``, ``call_self``, ``call_null``,
    ``call_argument``, ``call_star_args``, ``call_star_kwargs``, ``operand``,
    ``build_item``, ``collection_being_built``, ``previous_exception``,
    ``handler_exception``, ``handler_lasti``, ``saved_local``, ``value``);
    ``label`` says it in words.
    """

    position: int
    role: str
    label: str
    producer: InstrRef | None
    consumer: InstrRef | None
    call_target: str | None = None  # the callable's name when the slot belongs to a pending call


# --------------------------------------------------------------------------- instructions


@attrs.frozen
class _Code:
    instructions: tuple[dis.Instruction, ...]
    index_of: dict[int, int]  # byte offset (EXTENDED_ARG prefixes too) -> instruction index
    handlers: tuple[tuple[int, int, int, int, bool], ...]  # start, end, target, depth, lasti
    consts: tuple[object, ...]


_CODES: PerCode[_Code] = PerCode("stack models")


def _code(code: CodeType) -> _Code:
    cached = _CODES.get(code)
    if cached is not None:
        return cached
    instructions, index_of = _instructions(code)  # EXTENDED_ARG folded, as the liveness analysis does
    entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]  # exception_entries is not in typeshed
    handlers = tuple((e.start, e.end, e.target, e.depth, bool(e.lasti)) for e in entries)
    # A float constant's instruction keeps its text (argrepr) but not the float: a cached reference
    # to it would look like a second name bound to it to the encoder's float sharing (_reduce)
    instructions = [
        instr._replace(argval=None) if type(instr.argval) is float else instr for instr in instructions
    ]
    result = _Code(tuple(instructions), index_of, handlers, code.co_consts)
    return _CODES.put(code, result)


def _effect(instr: dis.Instruction, jump: bool) -> int:
    if instr.opname == "RETURN_GENERATOR":
        return 1  # re-entered with the first sent value on the stack (dis says 0 on 3.11/3.12)
    arg = instr.arg if instr.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(instr.opcode, arg, jump=jump)


def _pops(instr: dis.Instruction) -> int:
    """How many entries ``instr`` takes off the stack (before pushing its results)."""
    name, arg = instr.opname, instr.arg or 0
    if name in _POPS_ONE:
        return 1
    if name in _POPS_TWO:
        return 2
    if name in _POPS_THREE:
        return 3
    if name in _BUILD_N:
        return arg
    if name == "BUILD_MAP":
        return 2 * arg
    if name == "BUILD_CONST_KEY_MAP":
        return arg + 1
    if name == "FORMAT_VALUE":
        return 2 if arg & 0x04 else 1
    if name == "MAKE_FUNCTION":
        return 1 + bin(arg & 0x0F).count("1") if not _CALLABLE_FIRST else 1
    if name == "CALL":
        return arg + 2
    if name == "CALL_KW":
        return arg + 3
    if name == "CALL_FUNCTION_EX":
        return 3 + (arg & 1)
    return 0


def _pops_pushes(instr: dis.Instruction, jump: bool) -> tuple[int, int]:
    if _HAS_PRECALL and instr.opname == "PRECALL":
        return 0, 0  # modelled as part of the CALL that follows
    if _HAS_PRECALL and instr.opname == "CALL":
        return (instr.arg or 0) + 2, 1
    effect = _effect(instr, jump)
    pops = max(_pops(instr), -effect)
    return pops, pops + effect


def _successors(code: _Code, index: int) -> list[tuple[int, bool]]:
    """``(instruction index, via the jump)`` for the normal successors of instruction ``index``."""
    instr = code.instructions[index]
    out: list[tuple[int, bool]] = []
    if instr.opcode in _JUMPS and instr.argval in code.index_of:
        out.append((code.index_of[instr.argval], True))
    falls_through = instr.opname not in _UNCONDITIONAL and instr.opname not in _TERMINAL
    if falls_through and index + 1 < len(code.instructions):
        out.append((index + 1, False))
    return out


def _handler(code: _Code, offset: int) -> tuple[int, int, bool] | None:
    for start, end, target, depth, lasti in code.handlers:
        if start <= offset < end:
            return target, depth, lasti
    return None


# --------------------------------------------------------------------------- producers

# An origin is (kind, instruction index, push index): kind "instr", "lasti" or "exc".
_Origin = tuple[str, int, int]


def _producers(code: _Code, yield_index: int) -> tuple[_Origin, ...] | None:
    """The origin of each stack entry just before instruction ``yield_index`` runs."""
    states: dict[int, tuple[_Origin, ...]] = {0: ()}
    work = [0]
    while work:
        index = work.pop()
        stack = states[index]
        if index == yield_index:
            continue
        instr = code.instructions[index]
        handler = _handler(code, instr.offset)
        if handler is not None:
            target, depth, lasti = handler
            if target in code.index_of and depth <= len(stack):
                entry = stack[:depth]
                if lasti:
                    entry += (("lasti", code.index_of[target], 0),)
                entry += (("exc", code.index_of[target], 0),)
                _merge(states, work, code.index_of[target], entry)
        for successor, via_jump in _successors(code, index):
            after = _apply(stack, instr, index, via_jump)
            if after is not None:
                _merge(states, work, successor, after)
    return states.get(yield_index)


def _merge(
    states: dict[int, tuple[_Origin, ...]], work: list[int], index: int, stack: tuple[_Origin, ...]
) -> None:
    if index not in states:
        states[index] = stack
        work.append(index)


def _apply(
    stack: tuple[_Origin, ...], instr: dis.Instruction, index: int, jump: bool
) -> tuple[_Origin, ...] | None:
    name = instr.opname
    if name == "COPY":
        n = instr.arg or 1
        return (*stack, stack[-n]) if len(stack) >= n else None
    if name == "SWAP":
        n = instr.arg or 2
        if len(stack) < n:
            return None
        items = list(stack)
        items[-1], items[-n] = items[-n], items[-1]
        return tuple(items)
    pops, pushes = _pops_pushes(instr, jump)
    if pops > len(stack) or pushes < 0:
        return None
    kept = stack[: len(stack) - pops] if pops else stack
    return kept + tuple(("instr", index, k) for k in range(pushes))


# --------------------------------------------------------------------------- consumers


@attrs.frozen
class _Use:
    index: int  # the consuming instruction
    operand: int  # which of its inputs (0 = deepest)
    inputs: tuple[object, ...]  # what its inputs were: ("pos", p) or ("new", instruction index)
    peek: bool = False


def _consumers(code: _Code, yield_index: int, depth: int, awaiting: bool) -> dict[int, _Use]:
    """For positions ``0 .. depth-1``: the first instruction after the resumption that uses each."""
    stack: list[object] = [("pos", p) for p in range(depth)]
    stack.append(("sent", 0))  # the value sent in (or the await's result)
    index = yield_index
    if awaiting and yield_index > 0 and code.instructions[yield_index - 1].opname == "SEND":
        # Leave the await: SEND's exit branch with the receiver and the result on the stack.
        send = code.instructions[yield_index - 1]
        pops, pushes = _pops_pushes(send, True)
        stack = stack[: len(stack) - pops] + [("sent", 0)] * pushes
        if send.argval not in code.index_of:
            return {}
        index = code.index_of[send.argval]
    else:
        index = yield_index + 1
    uses: dict[int, _Use] = {}
    kwnames: object = None
    for _ in range(_MAX_CONSUMER_STEPS):
        if index >= len(code.instructions) or len(uses) >= depth:
            break
        instr = code.instructions[index]
        name = instr.opname
        if name == "KW_NAMES":
            kwnames = index
        if name in _PEEK_TARGET and instr.arg:
            at = len(stack) - _PEEK_TARGET[name] - instr.arg
            if 0 <= at < len(stack):
                _record(uses, stack[at], _Use(index, 0, (stack[at],), peek=True))
        jump = name in _UNCONDITIONAL or name == "SEND"
        if name == "COPY" or name == "SWAP":
            after = _apply_consumer(stack, instr, index)
        else:
            pops, pushes = _pops_pushes(instr, jump)
            if pops > len(stack) or pushes < 0:
                break
            inputs = tuple(stack[len(stack) - pops :]) if pops else ()
            if name == "CALL" and kwnames is not None:  # 3.11/3.12: names from the KW_NAMES before it
                inputs = (*inputs, ("kwnames", kwnames))
            for k, item in enumerate(inputs[:pops]):
                _record(uses, item, _Use(index, k, inputs))
            after = stack[: len(stack) - pops] + [("new", index)] * pushes
        if name in _CALLS:
            kwnames = None
        stack = after
        if name in _TERMINAL:
            break
        if jump:
            if instr.argval not in code.index_of:
                break
            index = code.index_of[instr.argval]
        else:
            index += 1
    return uses


def _apply_consumer(stack: list[object], instr: dis.Instruction, index: int) -> list[object]:
    n = instr.arg or 1
    if instr.opname == "COPY":
        return [*stack, stack[-n]] if len(stack) >= n else stack
    if len(stack) >= n:
        stack = list(stack)
        stack[-1], stack[-n] = stack[-n], stack[-1]
    return stack


def _record(uses: dict[int, _Use], item: object, use: _Use) -> None:
    if isinstance(item, tuple) and item[0] == "pos" and item[1] not in uses:
        uses[item[1]] = use


# --------------------------------------------------------------------------- labels


def describe_slots(
    code: CodeType,
    yield_offset_bytes: int,
    depth: int,
    null_mask: Sequence[bool],
    awaiting: bool,
    values: Sequence[object],
) -> list[SlotInfo]:
    """A :class:`SlotInfo` for each of the ``depth`` entries of a frame suspended at ``yield_offset_bytes``.

    ``values`` holds one value per position (anything for NULL slots); it is used
    only to name callables.  ``awaiting``: the top entry is the awaited object.
    """
    info = _code(code)
    yield_index = info.index_of.get(yield_offset_bytes)
    producers = _producers(info, yield_index) if yield_index is not None else None
    if producers is None or len(producers) != depth + 1:
        producers = None
    consumers = (
        _consumers(info, yield_index, depth, awaiting) if yield_index is not None and producers else {}
    )
    out = []
    for position in range(depth):
        producer = _producer_instr(info, producers[position]) if producers else None
        if position == depth - 1 and awaiting:
            out.append(SlotInfo(position, "awaited", "awaited object", producer, None))
            continue
        origin = producers[position] if producers else None
        use = consumers.get(position)
        out.append(_label(info, position, origin, use, null_mask, values, producers))
    return out


def _producer_instr(code: _Code, origin: _Origin) -> InstrRef | None:
    kind, index, _ = origin
    return InstrRef.of(code.instructions[index]) if kind == "instr" else None


def _label(
    code: _Code,
    position: int,
    origin: _Origin | None,
    use: _Use | None,
    null_mask: Sequence[bool],
    values: Sequence[object],
    producers: tuple[_Origin, ...] | None,
) -> SlotInfo:
    producer = _producer_instr(code, origin) if origin else None
    consumer = InstrRef.of(code.instructions[use.index]) if use else None

    def slot(role: str, label: str, call_target: str | None = None) -> SlotInfo:
        return SlotInfo(position, role, label, producer, consumer, call_target)

    if origin is not None:
        kind, index, push = origin
        if kind == "lasti":
            return slot("handler_lasti", "offset to re-raise at (exception handler bookkeeping)")
        if kind == "exc":
            return slot("handler_exception", "exception caught by the enclosing handler")
        opname = code.instructions[index].opname
        line = _line(code.instructions[index])
        if opname == "PUSH_EXC_INFO":
            if push == 0:
                return slot(
                    "previous_exception",
                    f"exception that was being handled before the except/finally block{line} "
                    "(restored when it ends)",
                )
            return slot("handler_exception", f"exception being handled by the block{line}")
        if opname in ("BEFORE_WITH", "BEFORE_ASYNC_WITH") and push == 0:
            if opname == "BEFORE_WITH":
                return slot("with_exit", f"exit of the 'with' block{line} (bound __exit__)")
            return slot("async_with_exit", f"exit of the 'async with' block{line} (bound __aexit__)")
        if opname == "LOAD_FAST_AND_CLEAR":
            name = code.instructions[index].argval
            return slot("saved_local", f"saved value of {name!r} outside the comprehension{line}")
        not_an_argument = use is None or use.peek or not _is_call(code, use)
        if opname in ("GET_ITER", "GET_AITER") and not_an_argument:
            if opname == "GET_AITER":
                return slot("async_for_iterator", f"async iterator of the 'async for'{line}")
            return slot("for_iterator", f"iterator of the 'for' loop{line}")
        if opname == "LOAD_FAST" and code.instructions[index].argval == ".0" and not_an_argument:
            # 3.11 comprehensions (and generator expressions) iterate over their argument .0
            if any(i.opname == "GET_ANEXT" for i in code.instructions):
                return slot("async_for_iterator", f"async iterator of the comprehension{line}")
            return slot("for_iterator", f"iterator of the comprehension{line}")
        if opname in _EMPTY_BUILDS and not code.instructions[index].arg and (use is None or use.peek):
            kind = _EMPTY_BUILDS[opname]
            return slot("collection_being_built", f"{kind} being built by the comprehension{line}")
    if use is not None:
        described = _by_consumer(code, use, null_mask, values, producers)
        if described is not None:
            role, label, target = described
            return slot(role, label, target)
    if null_mask[position]:
        return slot("null", "NULL (no value)")
    if producer is not None:
        return slot("value", _describe_producer(producer))
    return slot("value", f"stack slot {position}")


_EMPTY_BUILDS = {"BUILD_LIST": "list", "BUILD_SET": "set", "BUILD_MAP": "dict"}


def _describe_producer(ref: InstrRef) -> str:
    """What the instruction that pushed a value computed, in words."""
    name, arg, where = ref.opname, ref.argrepr, _line_ref(ref)
    if name in ("SEND", "END_SEND"):
        return f"result of an await{where}"
    if name in _CALLS or name == "PRECALL":
        return f"result of a call{where}"
    if name.startswith("LOAD_FAST") or name in ("LOAD_DEREF", "LOAD_CLOSURE"):
        return f"value of the local {arg}{where}"
    if name in ("LOAD_GLOBAL", "LOAD_NAME"):
        return f"value of the global {arg.replace('NULL + ', '').replace(' + NULL', '')}{where}"
    if name in ("LOAD_CONST", "RETURN_CONST"):
        return f"the constant {arg}{where}"
    if name in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"):
        return f"attribute .{arg.replace('NULL|self + ', '').replace(' + NULL|self', '')}{where}"
    if name in _BINARY:
        return f"result of {arg or name}{where}"
    return f"value pushed by {name} {arg}".rstrip() + where


def _line(instr: dis.Instruction) -> str:
    lineno = instr.positions.lineno if instr.positions else None
    return f" at line {lineno}" if lineno else ""


def _line_ref(ref: InstrRef) -> str:
    return f" (line {ref.lineno})" if ref.lineno else ""


def _is_call(code: _Code, use: _Use) -> bool:
    return code.instructions[use.index].opname in _CALLS


def _by_consumer(
    code: _Code,
    use: _Use,
    null_mask: Sequence[bool],
    values: Sequence[object],
    producers: tuple[_Origin, ...] | None,
) -> tuple[str, str, str | None] | None:
    instr = code.instructions[use.index]
    name = instr.opname
    line = _line(instr)
    if use.peek:
        return "collection_being_built", f"collection being built (filled by {name}{line})", None
    if name in _CALLS:
        return _call_role(code, use, null_mask, values, producers)
    if name in _BINARY:
        side = "left" if use.operand == 0 else "right"
        return "operand", f"{side} operand of {instr.argrepr or name}{line}", None
    if name in ("BINARY_SUBSCR", "BINARY_SLICE"):
        what = ("object being subscripted", "subscript", "slice end")[min(use.operand, 2)]
        return "operand", f"{what}{line}", None
    if name == "STORE_SUBSCR":
        what = ("value to store", "container", "subscript")[min(use.operand, 2)]
        return "operand", f"{what} of an item assignment{line}", None
    if name == "STORE_ATTR":
        what = "value to store in" if use.operand == 0 else "object receiving"
        return "operand", f"{what} .{instr.argval}{line}", None
    if name in ("BUILD_LIST", "BUILD_TUPLE", "BUILD_SET"):
        kind = {"BUILD_LIST": "list", "BUILD_TUPLE": "tuple", "BUILD_SET": "set"}[name]
        return "build_item", f"item {use.operand} of the {kind} being built{line}", None
    if name == "BUILD_STRING":
        return "build_item", f"part {use.operand} of the f-string being built{line}", None
    if name == "BUILD_MAP":
        which = "key" if use.operand % 2 == 0 else "value"
        return "build_item", f"{which} {use.operand // 2} of the dict being built{line}", None
    if name == "BUILD_CONST_KEY_MAP":
        return "build_item", f"value {use.operand} of the dict being built{line}", None
    if name in ("FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE"):
        return "operand", f"value being formatted in an f-string{line}", None
    if name == "DELETE_SUBSCR":
        what = "object whose item is deleted" if use.operand == 0 else "subscript being deleted"
        return "operand", f"{what}{line}", None
    if name == "MAP_ADD":
        which = "key" if use.operand == 0 else "value"
        return "build_item", f"{which} of the item being added to the dict comprehension{line}", None
    if name in ("LIST_APPEND", "SET_ADD"):
        return "build_item", f"item being added to the comprehension's result{line}", None
    if name in ("RETURN_VALUE",):
        return "operand", f"value being returned{line}", None
    return None


def _call_role(
    code: _Code,
    use: _Use,
    null_mask: Sequence[bool],
    values: Sequence[object],
    producers: tuple[_Origin, ...] | None,
) -> tuple[str, str, str | None]:
    instr = code.instructions[use.index]
    name, argc = instr.opname, instr.arg or 0
    inputs = use.inputs
    head = [item for item in inputs[:2]]

    def is_null(item: object) -> bool:
        return isinstance(item, tuple) and item[0] == "pos" and bool(null_mask[item[1]])

    # Which input is the callable, and what is it called?
    if _CALLABLE_FIRST:
        callable_item, second = head[0] if head else None, head[1] if len(head) > 1 else None
        second_role = "call_null" if second is not None and is_null(second) else "call_self"
    elif head and is_null(head[0]):
        callable_item, second_role = head[1] if len(head) > 1 else None, "call_callable"
    else:
        callable_item, second_role = head[0] if head else None, "call_self"
    target = _callable_name(code, callable_item, values, producers) or "a callable"
    call = f"{target}(...)" + _line(instr)
    operand = use.operand
    if operand < 2:
        item = inputs[operand]
        if item is callable_item:
            return "call_callable", f"function being called: {call}", target
        if is_null(item):
            return "call_null", f"NULL placeholder (no bound self) of the call {call}", target
        if second_role == "call_callable":
            return "call_callable", f"function being called: {call}", target
        return "call_self", f"self argument of the method call {call}", target
    if name == "CALL_FUNCTION_EX":
        if operand == 2:
            return "call_star_args", f"positional arguments (*args) of the call {call}", target
        return "call_star_kwargs", f"keyword arguments (**kwargs) of the call {call}", target
    index = operand - 2
    names = _kwnames(code, inputs)
    positional = argc - len(names)
    if index >= positional and index - positional < len(names):
        keyword = names[index - positional]
        return "call_argument", f"argument {keyword}= of the call {call}", target
    return "call_argument", f"argument {index} of the call {call}", target


def _kwnames(code: _Code, inputs: tuple[object, ...]) -> tuple[str, ...]:
    last = inputs[-1] if inputs else None
    if isinstance(last, tuple) and last[0] in ("kwnames", "new"):
        instr = code.instructions[last[1]]
        names = instr.argval
        if instr.opname == "KW_NAMES" and not isinstance(names, tuple):  # 3.11's dis does not resolve it
            arg = instr.arg or 0
            names = code.consts[arg] if 0 <= arg < len(code.consts) else None
        if instr.opname in ("KW_NAMES", "LOAD_CONST") and isinstance(names, tuple):
            return tuple(str(n) for n in names)
    return ()


def _callable_name(
    code: _Code, item: object, values: Sequence[object], producers: tuple[_Origin, ...] | None
) -> str | None:
    if not (isinstance(item, tuple) and item[0] == "pos"):
        return None
    position = item[1]
    if producers is not None:
        kind, index, _ = producers[position]
        if kind == "instr":
            instr = code.instructions[index]
            if instr.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK"):
                return str(instr.argval)
            if instr.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"):
                return f".{instr.argval}"
    value = values[position] if position < len(values) else None
    qualname = getattr(value, "__qualname__", None)
    return qualname if isinstance(qualname, str) else None
