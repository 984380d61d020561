"""Objects reached across two sandboxed processes: a task's tests in one, the
candidate's modules in the other.

Standard library only: both processes load it from a read-only file inside their
sandboxes. The test process (see testrun.py) imports the candidate's modules as
stand-ins whose attributes it asks for; a call, an attribute read or write, an
operator on the candidate's objects is a request on a pair of pipes to the
candidate's process (see worker.py), which does it and replies. Callbacks go the
other way: an object the tests pass in crosses as a reference, and the candidate's
process asks the test process to call it.

Messages, one JSON line each:

    {"do": what, "args": [...], "kwargs": {...}}    a request
    {"ok": value} | {"raised": exception}           its reply

A side that waits for its reply serves the other side's requests in between (a
callback that calls back), so requests nest as calls do.

Values are codec.py's tagged plain data, by value, decoded by the exact built-in
type: an instance of a subclass of a built-in crosses as the built-in value, read
through the built-in's own methods. Anything else is a reference:

    {"$obj": [id, type name, exception base,    an object of the sender's, held by
              class id, methods]}               the receiver as a proxy; a class
                                                deriving from an exception, as a
                                                stand-in class deriving from its
                                                nearest built-in exception
    {"$own": id}                                an object of the receiver's, back
    {"$exc": {"cls", "args", "text", "trace"}}  an exception (as a stand-in of its
                                                class, or the built-in one)
    {"$builtin": name}                          a built-in class: the receiver's own

The test process accepts from the candidate's only replies to its own requests, and
calls on the objects it handed out during the current test: a call, a method by a
public name or of the protocols a file or a context manager has (`TestSide`). It
serves no attribute read, import or evaluation; anything it refuses is raised in the
candidate as PermissionError and kept as evidence. A comparison between a candidate's
object and plain data never asks the candidate: only two of its objects are compared
by its own rules.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import functools
import importlib
import importlib.machinery
import itertools
import json
import operator
import os
import sys
import types
from collections.abc import Callable
from typing import Any

import codec

__unittest = True  # unittest leaves this module's frames out of the traces it reports

LINE_CAP = 64 * 1024 * 1024
READ_SIZE = 65536


class Stopped(BaseException):
    """The exchange with the other process cannot go on. A BaseException, so that
    code under test does not catch it with `except Exception`."""


class Gone(Stopped):
    """The other process closed its end: it exited, or a limit ended it."""


class Oversize(Stopped):
    """The other process sent a message over LINE_CAP."""


class Broken(Stopped):
    """The other process sent what the protocol does not allow."""


_DECODER = json.JSONDecoder()
_ENCODE = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode  # made once
_SCALARS = frozenset({type(None), bool, int, str})  # JSON values that are themselves


class Wire:
    """JSON lines on two file descriptors."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        self.write(_ENCODE(message))

    def write(self, line: str) -> None:
        """Send one message already encoded as JSON."""
        data = line.encode() + b"\n"
        try:
            while data:
                data = data[os.write(self.fd_out, data) :]
        except OSError as exc:
            raise Gone(f"could not send ({exc})") from None

    def receive(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            try:
                chunk = os.read(self.fd_in, READ_SIZE)
            except OSError as exc:
                raise Gone(f"could not receive ({exc})") from None
            if not chunk:
                raise Gone("the other process closed its end")
            self.buffer += chunk
            if len(self.buffer) > LINE_CAP:
                raise Oversize(f"a message over {LINE_CAP} bytes")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            text = line.decode()
            message, end = _DECODER.raw_decode(text)
        except (ValueError, RecursionError):
            raise Broken("a message that is not JSON") from None
        if end != len(text):
            raise Broken("a message with more than one JSON value")
        if not isinstance(message, dict):
            raise Broken("a message that is not a JSON object")
        return message


def _method(value: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
    return getattr(value, name)(*args, **kwargs)


def _call(value: Any, /, *args: Any, **kwargs: Any) -> Any:
    return value(*args, **kwargs)


def _public(module: Any) -> list[str]:
    """The names `from module import *` takes."""
    names = getattr(module, "__all__", None)
    return list(names) if names is not None else [n for n in vars(module) if n[:1] != "_"]


def _swapped(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda value, other: function(other, value)


_ARITHMETIC: tuple[str, ...] = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")
_ARITHMETIC += ("lshift", "rshift", "and_", "or_", "xor")
# What either side can be asked to do, by name: the first argument is the object
# it is done to. The test side serves only some of them (TestSide.SERVED).
OPERATIONS: dict[str, Callable[..., Any]] = {
    "call": _call,
    "method": _method,
    "getattr": getattr,
    "setattr": setattr,
    "delattr": delattr,
    "len": len,
    "hash": hash,
    "bool": operator.truth,
    "str": str,
    "repr": repr,
    "format": format,
    "iter": iter,
    "next": next,
    "contains": operator.contains,
    "getitem": operator.getitem,
    "setitem": operator.setitem,
    "delitem": operator.delitem,
    "index": operator.index,
    "int": int,
    "float": float,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
    "import": importlib.import_module,
    "isinstance": isinstance,
    "issubclass": issubclass,
    "public": _public,
    **{name: getattr(operator, name) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{name: getattr(operator, name) for name in _ARITHMETIC},
    **{"r" + name: _swapped(getattr(operator, name)) for name in _ARITHMETIC},
}
_BUILTIN_NAMES = {id(value): name for name, value in vars(builtins).items()}


def _nearest_builtin_exception(kind: type) -> str:
    for base in kind.__mro__:
        if _BUILTIN_NAMES.get(id(base)) and issubclass(base, BaseException):
            return base.__name__
    return "Exception"


def _made(kind: type[BaseException], args: tuple[Any, ...]) -> BaseException:
    """An exception of `kind` with `args`, made as raising it would make it (an
    OSError's errno and file name, say), or with them set when its constructor
    refuses them."""
    try:
        return kind(*args)
    except Exception:
        pass
    try:
        error = kind.__new__(kind, *args)
    except Exception:
        error = Exception.__new__(Exception)
    error.args = args
    return error


def _arguments(error: BaseException) -> tuple[Any, ...]:
    """What makes `error` again: its arguments, and an OSError's file names, which
    its arguments leave out."""
    if isinstance(error, OSError) and error.filename is not None and len(error.args) == 2:
        return (*error.args, error.filename, None, error.filename2)[: 5 if error.filename2 else 3]
    return tuple(error.args)


def _stand_in_text(error: BaseException) -> str:
    """A stand-in exception's text: what the other side's `str` of it was."""
    text = error.__dict__.get("_ct_text")
    return text if isinstance(text, str) else BaseException.__str__(error)


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:
        return ""


class Method:
    """A method of one of this process's objects, as an attribute read returns it: it
    crosses as {"$method": [the object's id, name]}, and the other side calls it by
    name, in one request, without reading the attribute again."""

    __slots__ = ("name", "target")

    def __init__(self, target: Any, name: str) -> None:
        self.target, self.name = target, name


class Endpoint:
    """One process's end of the exchange: the objects it handed out (by id), the
    proxies and stand-ins it holds for the other's, and requests that nest."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.mine: dict[int, Any] = {}
        self._mine_ids: dict[int, int] = {}  # id() of an object handed out -> its id
        self.theirs: dict[int, Any] = {}
        self._their_ids: dict[int, int] = {}  # id() of a proxy or stand-in -> its id
        self._issued = 0  # the last id handed out
        self.stopped: Stopped | None = None
        self._tags = {
            "$obj": self._proxy,
            "$own": self._own,
            "$exc": self._raised,
            "$builtin": self.builtin,
        }

    # Requests this side makes
    def request(self, do: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Any:
        """Ask the other process to do `do` to `args`; its value, or its exception
        raised here. Requests the other process makes meanwhile are served."""
        message = {
            "do": do,
            "args": [self.encode(a) for a in args],
            "kwargs": {k: self.encode(v) for k, v in (kwargs or {}).items()},
        }
        return self.exchange(_ENCODE(message))

    def exchange(self, line: str) -> Any:
        """Send a request already encoded as JSON and wait for its reply, serving the
        other process's requests meanwhile."""
        try:
            # What the other process sent before it went is read below, then its end.
            with contextlib.suppress(Gone):
                self.wire.write(line)
            while True:
                message = self.wire.receive()
                if "do" in message:
                    self.wire.send(self.serve(message))
                elif "ok" in message:
                    return self.decode(message["ok"])
                elif "raised" in message:
                    error = self.decode(message["raised"])
                    if not isinstance(error, BaseException):
                        raise Broken("raised what is not an exception")
                    raise error
                else:
                    raise Broken("a message that is neither a request nor a reply")
        except Stopped as stop:
            self.stopped = self.stopped or stop
            raise

    # Requests the other side makes
    def serve(self, message: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request."""
        do, args, kwargs = message.get("do"), message.get("args"), message.get("kwargs")
        if not isinstance(args, list) or not isinstance(kwargs, dict) or not args:
            raise Broken("a request without its arguments")
        try:
            function = self.allowed(str(do), args)
            value = function(
                *[a if type(a) in _SCALARS else self.decode(a) for a in args],
                **{k: self.decode(v) for k, v in kwargs.items()},
            )
        except Stopped:
            raise
        except BaseException as exc:
            return {"raised": self.encode(exc)}
        return {"ok": self.encode(value)}

    def allowed(self, do: str, args: list[Any]) -> Callable[..., Any]:
        """The operation a request asks for; raises what the requester gets when it
        is refused."""
        function = OPERATIONS.get(do)
        if function is None:
            raise Broken(f"a request to do {do!r}")
        return function

    # Values
    def encode(self, value: Any) -> Any:
        if type(value) in _SCALARS:
            return value
        back = self._back(value)  # the common case, a proxy as a request's object
        return back if back is not None else codec.encode(value, other=self._reference)

    def _back(self, value: Any) -> dict[str, int] | None:
        """{"$own": id} when `value` stands here for the other side's object `id`."""
        theirs = self._their_ids.get(id(value))
        if theirs is not None and self.theirs.get(theirs) is value:
            return {"$own": theirs}
        return None

    def _reference(self, value: Any) -> Any:
        back = self._back(value)
        if back is not None:
            return back
        if type(value) is Method:
            return {"$method": [self._handed_out(value.target), value.name]}
        name = _BUILTIN_NAMES.get(id(value))
        if name is not None and isinstance(value, type):
            return {"$builtin": name}
        ident = self._handed_out(value)
        if isinstance(value, BaseException):
            return {"$exc": self._exception(value, ident)}
        if isinstance(value, type) and issubclass(value, BaseException):
            return {"$obj": [ident, value.__name__, _nearest_builtin_exception(value), None, None]}
        kind, methods = self.class_of(value), self.methods_of(value)
        return {"$obj": [ident, type(value).__name__, None, kind, methods]}

    def _handed_out(self, value: Any) -> int:
        """The id `value` is handed out under, given now when it has none."""
        ident = self._mine_ids.get(id(value))
        if ident is None or self.mine.get(ident) is not value:
            self._issued += 1
            ident = self._issued
            self.mine[ident] = value
            self._mine_ids[id(value)] = ident
        return ident

    def _held(self, ident: int, value: Any) -> Any:
        """Keep `value` as what stands here for the other side's object `ident`."""
        self.theirs[ident] = value
        self._their_ids[id(value)] = ident
        return value

    def _exception(self, error: BaseException, ident: int) -> dict[str, Any]:
        try:
            text = str(error)
        except Exception:
            text = "<unprintable>"
        try:
            args = self.encode(list(_arguments(error)))
        except Exception:
            args = []
        return {
            "id": ident,
            "cls": self.encode(type(error)),
            "args": args,
            "text": text,
            "trace": self.trace(error),
        }

    def trace(self, error: BaseException) -> str:
        """The part of an exception's traceback to send with it: none by default."""
        return ""

    def decode(self, data: Any) -> Any:
        if type(data) in _SCALARS:
            return data
        try:
            return codec.decode(data, tags=self._tags)
        except (Stopped, ReferenceError):
            raise
        except Exception as exc:
            raise Broken(f"a malformed value ({type(exc).__name__}: {exc})") from None

    def _own(self, ident: Any) -> Any:
        if not self.issued(ident):
            raise Broken("a reference to what was never handed out")
        if ident not in self.mine:
            raise ReferenceError("an object that is no longer handed out")
        return self.mine[ident]

    def issued(self, ident: Any) -> bool:
        """Whether `ident` names an object this side handed out, now or before."""
        return type(ident) is int and 0 < ident <= self._issued

    def builtin(self, name: Any) -> Any:
        """The built-in class named `name`, as this side admits it."""
        value = getattr(builtins, str(name), None)
        if not isinstance(value, type):
            raise Broken(f"a built-in class that is not one: {name!r}")
        return value

    def _proxy(self, body: Any) -> Any:
        if not (isinstance(body, list) and len(body) == 5 and type(body[0]) is int):
            raise Broken("a malformed reference")
        ident, name, base, kind, methods = body
        if kind is not None and type(kind) is not int:
            raise Broken("a malformed reference")
        if methods is not None and not (
            isinstance(methods, list) and all(type(m) is str for m in methods)
        ):
            raise Broken("a malformed reference")
        known = self.theirs.get(ident)
        if known is None:
            made = (
                self.proxy(ident, kind, frozenset(methods or ()))
                if base is None
                else self.stand_in(str(name), base)
            )
            known = self._held(ident, made)
        return known

    def proxy(self, ident: int, kind: int | None, methods: frozenset[str]) -> Any:
        """What stands here for the other side's object `ident`, of the class the
        other side handed out as `kind` (when it says), whose `methods` are plain
        methods of its class."""
        raise NotImplementedError

    def class_of(self, value: Any) -> int | None:
        """The id to send with an object of this side's for its class: none by
        default."""
        return None

    def methods_of(self, value: Any) -> list[str] | None:
        """The names to send with an object of this side's whose reads are its
        class's plain methods: none by default."""
        return None

    def stand_in(self, name: str, base: Any) -> type:
        """A class of this side's for an exception class of the other's, deriving
        from the built-in exception `base` names (Exception when it names none)."""
        kind = getattr(builtins, str(base), None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = Exception
        try:
            return type(name, (kind,), {"__module__": "candidate", "__str__": _stand_in_text})
        except (TypeError, ValueError):
            raise Broken(f"an exception class named {name!r}") from None

    def _raised(self, body: Any) -> BaseException:
        if not isinstance(body, dict) or not isinstance(body.get("args"), list):
            raise Broken("a malformed exception")
        kind = self.decode(body.get("cls"))
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            raise Broken("an exception whose class is not one")
        if not issubclass(kind, Exception):
            kind = self.stand_in(kind.__name__, "Exception")
        args = tuple(self.decode(body["args"]))
        error = _made(kind, args)
        text, trace = body.get("text"), body.get("trace")
        if isinstance(text, str) and kind.__str__ is _stand_in_text:
            error.__dict__["_ct_text"] = text
        elif isinstance(text, str) and text != _text(error):
            error.add_note(text)
        if isinstance(trace, str) and trace:
            error.add_note(f"raised in the candidate's code, at:\n{trace}".rstrip())
        if type(body.get("id")) is int:
            self._held(body["id"], error)
        return error


def _unary(do: str) -> Callable[[Any], Any]:
    def forward(self: Any) -> Any:
        return object.__getattribute__(self, "_ct_end").request(do, (self,))

    return forward


def _binary(do: str) -> Callable[[Any, Any], Any]:
    def forward(self: Any, other: Any) -> Any:
        return object.__getattribute__(self, "_ct_end").request(do, (self, other))

    return forward


# The assertions of unittest that hand their first argument the tests' expected
# data: assertSetEqual asks `first.difference(expected)`, assertIn and assertNotIn
# `expected in first`, assertAlmostEqual and assertNotAlmostEqual `first - expected`.
_HANDING: tuple[str, ...] = ("assertSetEqual", "assertIn", "assertNotIn", "assertAlmostEqual")
_HANDING += ("assertNotAlmostEqual",)


@functools.cache
def _unittest_code(names: tuple[str, ...]) -> frozenset[Any]:
    """The code of unittest's TestCase methods `names`."""
    import unittest

    return frozenset(getattr(unittest.TestCase, name).__code__ for name in names)


def _from_an_assertion() -> bool:
    """Whether the operation on a candidate's object that called this was done by one
    of the assertions that would hand the object the tests' expected data."""
    return sys._getframe(2).f_code in _unittest_code(_HANDING)


def _handed_data(what: str) -> AssertionError:
    """The failure of an assertion that asked a candidate's object to compare itself
    with the tests' data: a candidate's object is compared only with another of its
    objects, or as plain data."""
    return AssertionError(
        "a candidate's object is compared only with another of its objects, or as plain "
        f"data: the assertion would hand it the tests' data ({what})"
    )


# unittest's methods that call a test's own methods: an exception that leaves one of
# these ends the test as an error.
_RUNS_TESTS = ("_callSetUp", "_callTestMethod", "_callTearDown")


def _statement_call() -> tuple[int, int, int]:
    """The opcodes of a call and of the instruction that drops its value, and how far
    the second starts after the first (past the call's inline caches), read from the
    statement `f()` as this interpreter compiles it."""
    instructions = list(dis.get_instructions(compile("f()", "<statement>", "exec")))
    for call, after in itertools.pairwise(instructions):
        if call.opname == "CALL" and after.opname == "POP_TOP":
            return call.opcode, after.opcode, after.offset - call.offset
    return -1, -1, 0  # an interpreter whose statements drop values otherwise: none is sent later


_CALL, _POP_TOP, _CALL_WIDTH = _statement_call()


def _dropped(frame: Any) -> bool:
    """Whether the call `frame` is making is a statement: its value is dropped."""
    code: bytes = frame.f_code.co_code
    at: int = frame.f_lasti
    return code[at] == _CALL and at + _CALL_WIDTH < len(code) and code[at + _CALL_WIDTH] == _POP_TOP


_HANDLED: dict[int, tuple[Any, tuple[tuple[int, int], ...]]] = {}  # id(code) -> it, ranges


def _handled(code: Any) -> tuple[tuple[int, int], ...]:
    """The ranges of offsets in `code` that an exception handler covers (a `try`, a
    `with`); kept by the code's identity, which hashing a code object would cost more
    than."""
    known = _HANDLED.get(id(code))
    if known is None or known[0] is not code:
        entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]
        known = _HANDLED[id(code)] = code, tuple((e.start, e.end) for e in entries)
    return known[1]


def _line(code: Any, offset: int) -> int | None:
    """The line of `code` that the instruction at `offset` is on."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line  # type: ignore[no-any-return]
    return None


def _unhandled(frame: Any, tests: frozenset[str]) -> bool:
    """Whether an exception raised at `frame`'s current instruction would end the
    test as an error, wherever it was raised instead: no `try` or `with` covers it
    in this frame or in the test files' frames that called it, up to the unittest
    method that called the test's own."""
    while frame is not None and frame.f_code.co_filename in tests:
        if any(start <= frame.f_lasti < end for start, end in _handled(frame.f_code)):
            return False
        frame = frame.f_back
    return frame is not None and frame.f_code in _unittest_code(_RUNS_TESTS)


def _handed(do: str) -> Callable[[Any, Any], Any]:
    """An operator that hands the candidate's object another operand: refused when
    an assertion helper does it."""

    def forward(self: Any, other: Any) -> Any:
        if _from_an_assertion():
            raise _handed_data(do)
        return object.__getattribute__(self, "_ct_end").request(do, (self, other))

    return forward


def _compared(do: str) -> Callable[[Any, Any], Any]:
    """A comparison that asks the candidate only when both sides are its objects."""

    def forward(self: Any, other: Any) -> Any:
        end = object.__getattribute__(self, "_ct_end")
        if not (end.holds(other) and end.compares(self)):
            return NotImplemented
        return end.request(do, (self, other))

    return forward


class _Proxy:
    """An object of the other process's: what is done to it is a request there."""

    __slots__ = ("_ct_end", "_ct_id")

    def __init__(self, end: Endpoint, ident: int) -> None:
        object.__setattr__(self, "_ct_end", end)
        object.__setattr__(self, "_ct_id", ident)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "_ct_end").request("call", (self, *args), kwargs)

    def __enter__(self) -> Any:
        return object.__getattribute__(self, "_ct_end").request("method", (self, "__enter__"))

    def __exit__(self, *exc: Any) -> Any:
        end = object.__getattribute__(self, "_ct_end")
        return end.request("method", (self, "__exit__", *exc))

    def __copy__(self) -> Any:
        return self  # a copy here of an object there is the same object there

    def __deepcopy__(self, memo: Any) -> Any:
        return self

    __len__ = _unary("len")
    __bool__ = _unary("bool")
    __str__ = _unary("str")
    __repr__ = _unary("repr")
    __iter__ = _unary("iter")
    __next__ = _unary("next")
    __getitem__ = _binary("getitem")


class Remote(_Proxy):
    """An object of the candidate's, in the test process: everything done to it is
    a request to the candidate's process. `_ct_class`: the id of its class there;
    `_ct_methods`: the names that read a plain method of its class, each called
    by name without being read first (a `method` request reads it afresh)."""

    __slots__ = ("_ct_class", "_ct_methods")

    def __init__(
        self, end: TestSide, ident: int, kind: int | None, methods: frozenset[str]
    ) -> None:
        super().__init__(end, ident)
        object.__setattr__(self, "_ct_class", kind)
        object.__setattr__(self, "_ct_methods", methods)

    def __getattr__(self, name: str) -> Any:
        end = object.__getattribute__(self, "_ct_end")
        ident = object.__getattribute__(self, "_ct_id")
        known = end.methods.get((ident, name))
        if known is None and name in object.__getattribute__(self, "_ct_methods"):
            known = end.methods[ident, name] = RemoteMethod(self, name)
        return known if known is not None else end.request("getattr", (self, name))

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "_ct_end").request("setattr", (self, name, value))

    def __delattr__(self, name: str) -> None:
        object.__getattribute__(self, "_ct_end").request("delattr", (self, name))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _from_an_assertion():
            raise _handed_data("a call")
        end = object.__getattribute__(self, "_ct_end")
        return end.call(sys._getframe(1), "call", (self, *args), kwargs)

    def __setitem__(self, key: Any, value: Any) -> None:
        object.__getattribute__(self, "_ct_end").request("setitem", (self, key, value))

    def __instancecheck__(self, value: Any) -> bool:
        """`isinstance(value, Clock)`, with `Clock` a class of the candidate's."""
        end = object.__getattribute__(self, "_ct_end")
        return bool(end.request("isinstance", (value, self)))

    def __subclasscheck__(self, kind: Any) -> bool:
        end = object.__getattribute__(self, "_ct_end")
        return bool(end.request("issubclass", (kind, self)))

    def __format__(self, spec: str) -> str:
        end = object.__getattribute__(self, "_ct_end")
        return str(end.request("format", (self, spec)))

    __hash__ = _unary("hash")
    __index__ = _unary("index")
    __int__ = _unary("int")
    __float__ = _unary("float")
    __neg__ = _unary("neg")
    __pos__ = _unary("pos")
    __abs__ = _unary("abs")
    __invert__ = _unary("invert")
    __contains__ = _handed("contains")
    __delitem__ = _binary("delitem")
    __eq__ = _compared("eq")
    __ne__ = _compared("ne")
    __lt__ = _compared("lt")
    __le__ = _compared("le")
    __gt__ = _compared("gt")
    __ge__ = _compared("ge")
    __add__, __radd__ = _handed("add"), _handed("radd")
    __sub__, __rsub__ = _handed("sub"), _handed("rsub")
    __mul__, __rmul__ = _handed("mul"), _handed("rmul")
    __truediv__, __rtruediv__ = _handed("truediv"), _handed("rtruediv")
    __floordiv__, __rfloordiv__ = _handed("floordiv"), _handed("rfloordiv")
    __mod__, __rmod__ = _handed("mod"), _handed("rmod")
    __pow__, __rpow__ = _handed("pow"), _handed("rpow")
    __matmul__, __rmatmul__ = _handed("matmul"), _handed("rmatmul")
    __lshift__, __rlshift__ = _handed("lshift"), _handed("rlshift")
    __rshift__, __rrshift__ = _handed("rshift"), _handed("rrshift")
    __and__, __rand__ = _handed("and_"), _handed("rand_")
    __or__, __ror__ = _handed("or_"), _handed("ror_")
    __xor__, __rxor__ = _handed("xor"), _handed("rxor")


class RemoteMethod:
    """A method of a candidate's object, in the test process: calling it is one
    request, which reads the method afresh in the candidate's process and calls it."""

    __slots__ = ("_name", "_target")

    def __init__(self, target: Remote, name: str) -> None:
        self._target, self._name = target, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _from_an_assertion():
            raise _handed_data(f"its method {self._name}")
        end = object.__getattribute__(self._target, "_ct_end")
        return end.call(sys._getframe(1), "method", (self._target, self._name, *args), kwargs)

    def __repr__(self) -> str:
        return f"<method {self._name} of a candidate's object>"


class RemoteModule(types.ModuleType):
    """A module of the candidate's, in the test process: its attributes are asked
    for (and set, as `mock.patch` does) in the candidate's process; its dunder
    attributes are the import system's, kept here."""

    def __getattr__(self, name: str) -> Any:
        remote = self.__dict__.get("__remote__")
        if name == "__all__" and remote is not None:  # what `from module import *` takes
            return self._star(remote, sys._getframe(1).f_globals)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = getattr(remote, name)
        end = object.__getattribute__(remote, "_ct_end")
        if type(value) is Remote and end.holds(value):
            end.named.add(object.__getattribute__(value, "_ct_id"))
        return value

    @staticmethod
    def _star(remote: Remote, importer: dict[str, Any]) -> list[str]:
        """The candidate's public names, save those the importing test file already
        binds: a star import never replaces what the tests defined."""
        names = object.__getattribute__(remote, "_ct_end").request("public", (remote,))
        if not isinstance(names, list):
            return []
        return [n for n in names if isinstance(n, str) and n[:1] != "_" and n not in importer]

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") and name.endswith("__"):
            super().__setattr__(name, value)
        else:
            setattr(self.__dict__["__remote__"], name, value)

    def __delattr__(self, name: str) -> None:
        if name.startswith("__") and name.endswith("__"):
            super().__delattr__(name)
        else:
            delattr(self.__dict__["__remote__"], name)


class TestSide(Endpoint):
    """The test process's end. What it serves the candidate's process: a call on an
    object it handed out during the current test, a method of one by a public name
    or by a name in PROTOCOLS, or one of the SERVED operations on one. Everything
    else is refused (see `refused`).

    A call whose value the tests drop (a statement such as `game.roll(3)`) is sent
    later, with the others like it, as one request before the next one that needs a
    reply: when the test has handed the candidate nothing it could call back, and an
    exception the call raised would end the test as an error wherever it is raised
    (`_unhandled`). Such an exception is raised when the calls are sent, and kept as
    `late`: the test is an error, whatever handles it there."""

    __test__ = False
    PROTOCOLS = frozenset(
        {"__enter__", "__exit__", "__iter__", "__next__", "__len__", "__contains__"}
    )
    SERVED = frozenset(
        {"call", "method", "len", "bool", "str", "repr", "iter", "next", "contains", "getitem"}
    )
    # Built-in classes that may cross as values: plain data's, and exceptions'.
    CLASSES = frozenset(
        {"object", "bool", "int", "float", "complex", "str", "bytes", "bytearray"}
        | {"list", "tuple", "set", "frozenset", "dict", "type"}
    )

    DROPPED_CALLS = 512  # sent together at most
    DROPPED_CHARS = 1 << 20  # of JSON, sent together at most

    def __init__(self, wire: Wire, tests: frozenset[str] = frozenset()) -> None:
        """`tests`: the test files' paths, as their code names them."""
        super().__init__(wire)
        self.tests = tests
        self.refused: list[str] = []
        self.methods: dict[tuple[int, str], RemoteMethod] = {}  # (object id, name) -> it
        self.named: set[int] = set()  # the candidate's objects read from its modules
        self._tags["$method"] = self._method
        # Calls not sent yet: each as JSON, with where the tests made it (code, offset).
        self._dropped: list[tuple[str, Any, int]] = []
        self._dropped_chars = 0
        self.late: BaseException | None = None

    def call(self, frame: Any, do: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call (`do`: "call" or "method") that the tests' `frame` makes: its value,
        or None when it is sent later (see the class)."""
        if (
            self.mine
            or frame.f_code.co_filename not in self.tests
            or not _dropped(frame)
            or not _unhandled(frame, self.tests)
        ):
            return self.request(do, args, kwargs)
        named = [[k, self.encode(v)] for k, v in kwargs.items()]
        line = _ENCODE([do, [self.encode(a) for a in args], named])
        if self.mine:  # the call hands the candidate an object: it may call back now
            return self.request(do, args, kwargs)
        self._dropped.append((line, frame.f_code, frame.f_lasti))
        self._dropped_chars += len(line)
        if len(self._dropped) >= self.DROPPED_CALLS or self._dropped_chars > self.DROPPED_CHARS:
            self.settle()
        return None

    def request(self, do: str, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Any:
        if self._dropped:
            self.settle()
        return super().request(do, args, kwargs)

    def settle(self) -> None:
        """Send the dropped calls as one request, and raise the exception one raised
        (the candidate's process runs none after it)."""
        calls, self._dropped, self._dropped_chars = self._dropped, [], 0
        lines = ",".join(line for line, _, _ in calls)
        failed = self.exchange('{"do":"dropped","args":[' + lines + '],"kwargs":{}}')
        if failed is None:
            return
        if not (isinstance(failed, list) and len(failed) == 2 and type(failed[0]) is int):
            raise Broken("a malformed reply to dropped calls")
        index, error = failed
        if not (isinstance(error, BaseException) and 0 <= index < len(calls)):
            raise Broken("a malformed reply to dropped calls")
        _, code, offset = calls[index]
        error.add_note(
            f"raised by the call at {code.co_filename}, line {_line(code, offset)}, whose "
            "value the tests drop: it ran when the tests next waited for the candidate's code"
        )
        self.late = self.late or error
        raise error

    def _method(self, body: Any) -> RemoteMethod:
        if not (isinstance(body, list) and len(body) == 2 and type(body[0]) is int):
            raise Broken("a malformed method")
        ident, name = body
        target = self.theirs.get(ident)
        if type(target) is not Remote or type(name) is not str:
            raise Broken("a method of what is not a candidate's object")
        known = self.methods.get((ident, name))
        if known is None:
            known = self.methods[ident, name] = RemoteMethod(target, name)
        return known

    def holds(self, value: Any) -> bool:
        """Whether `value` is a proxy of the candidate's objects."""
        return self.theirs.get(self._their_ids.get(id(value), 0)) is value

    def compares(self, value: Remote) -> bool:
        """Whether the candidate decides how `value` compares with another of its
        objects: when the tests named its class (read it from a module of the
        candidate's, as `from clock import Clock` does)."""
        return object.__getattribute__(value, "_ct_class") in self.named

    def proxy(self, ident: int, kind: int | None, methods: frozenset[str]) -> Remote:
        return Remote(self, ident, kind, methods)

    def builtin(self, name: Any) -> Any:
        value = super().builtin(name)
        if value.__name__ in self.CLASSES or issubclass(value, Exception):
            return value
        if issubclass(value, BaseException):
            return self.stand_in(value.__name__, "Exception")
        raise Broken(f"the built-in {name!r}, which only plain data's and exceptions' are")

    def allowed(self, do: str, args: list[Any]) -> Callable[..., Any]:
        target = args[0]
        ident = target.get("$own") if isinstance(target, dict) and len(target) == 1 else None
        if do not in self.SERVED:
            why = f"asked the tests' process to do {do!r}"
        elif not self.issued(ident):
            why = f"asked the tests' process to do {do!r} to what it never handed out"
        elif ident not in self.mine:
            raise ReferenceError("a callback handed out by an earlier test is called")
        elif do == "method" and not self._public(args[1:2]):
            why = f"called a method of a test's object that is not public: {args[1:2]}"
        elif do == "method" and _mock_machinery(self.mine[ident], args[1]):
            why = f"called the tests' mock's own method {args[1]!r}"
        elif do == "method" and isinstance(self.mine[ident], type):
            why = f"called a method of a class of the tests': {args[1]!r}"
        else:
            return OPERATIONS[do]
        self.refused.append(why[:200])
        raise PermissionError(why)

    def _public(self, name: list[Any]) -> bool:
        if not name or type(name[0]) is not str:
            return False
        return name[0] in self.PROTOCOLS or not name[0].startswith("_")

    def scope(self) -> BaseException | None:
        """The current test is over: its dropped calls are sent, and what it handed out
        is no longer served. The exception that makes the test an error after all:
        one of its dropped calls raised it, or it ended the exchange."""
        try:
            if self._dropped:
                self.settle()
        except BaseException as exc:
            self.late = self.late or exc
        late, self.late = self.late, None
        self.mine.clear()
        self._mine_ids.clear()
        return late


def _mock_machinery(value: Any, name: str) -> bool:
    """Whether `name` is one of a mock's own methods (`assert_called_with`,
    `configure_mock`, `reset_mock`...): the tests' machinery, not the interface the
    mock stands in for."""
    mock = sys.modules.get("unittest.mock")
    return (
        mock is not None
        and isinstance(value, mock.NonCallableMock)
        and (hasattr(mock.NonCallableMock, name) or hasattr(mock.CallableMixin, name))
    )


class Modules:
    """A meta path finder that imports the candidate's modules (name -> the path of
    its file in the workspace) as RemoteModules. Duck-typed, as testrun's finder is."""

    def __init__(self, end: TestSide, modules: dict[str, str]) -> None:
        self.end = end
        self.modules = modules

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.modules:
            return None
        loader: Any = self
        return importlib.machinery.ModuleSpec(name, loader, origin=self.modules[name])

    def create_module(self, spec: Any) -> RemoteModule:
        return RemoteModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.modules[module.__name__]
        module.__dict__["__remote__"] = self.end.request("import", (module.__name__,))


class Peer(_Proxy):
    """An object the tests handed out, in the candidate's process: calls on it, and
    on its methods by name, are requests to the tests' process."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__") and name.endswith("__") and name not in TestSide.PROTOCOLS:
            raise AttributeError(name)  # what probes an object (copy's, pickle's) finds
        end = object.__getattribute__(self, "_ct_end")
        return lambda *args, **kwargs: end.request("method", (self, name, *args), kwargs)

    __contains__ = _binary("contains")


def _plain_methods(kind: type) -> frozenset[str]:
    """The public names an instance of `kind` reads as a plain function of its class
    (a method, bound when read, with nothing run on the way); none when the class
    reads its attributes its own way (`__getattr__`, `__getattribute__`)."""
    found: dict[str, bool] = {}
    for klass in kind.__mro__[:-1]:  # object's own reads are the usual ones
        space = vars(klass)
        if "__getattr__" in space or "__getattribute__" in space:
            return frozenset()
        for name, value in space.items():
            found.setdefault(name, type(value) is types.FunctionType)
    return frozenset(name for name, plain in found.items() if plain and name[:1] != "_")


def _attribute(target: Any, name: str) -> Any:
    """An attribute of `target`; a method bound to it as a Method."""
    value = getattr(target, name)
    if isinstance(value, types.MethodType) and value.__self__ is target:
        return Method(target, name)
    return value


class CandidateSide(Endpoint):
    """The candidate's process's end: it serves every operation on its objects, and
    imports its modules on request. `describe` formats an exception's traceback."""

    def __init__(self, wire: Wire, describe: Callable[[BaseException], str]) -> None:
        super().__init__(wire)
        self._describe = describe
        self._plain: dict[type, frozenset[str]] = {}  # a class -> its plain methods

    def proxy(self, ident: int, kind: int | None, methods: frozenset[str]) -> Peer:
        return Peer(self, ident)

    def class_of(self, value: Any) -> int | None:
        return self._handed_out(type(value))

    def methods_of(self, value: Any) -> list[str] | None:
        """Its class's plain methods (`_plain_methods`), when the object's own
        attributes hide none of them."""
        kind = type(value)
        names = self._plain.get(kind)
        if names is None:
            names = self._plain[kind] = _plain_methods(kind)
        try:
            own = object.__getattribute__(value, "__dict__")
        except AttributeError:
            own = {}
        if not names or type(own) is not dict or not names.isdisjoint(own):
            return None
        return sorted(names)

    def allowed(self, do: str, args: list[Any]) -> Callable[..., Any]:
        return _attribute if do == "getattr" else super().allowed(do, args)

    def serve(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("do") == "dropped":
            return {"ok": self.encode(self._dropped(message.get("args")))}
        return super().serve(message)

    def _dropped(self, calls: Any) -> list[Any] | None:
        """Make the calls whose values the tests drop ([do, arguments, [name, value]
        pairs] each), in turn, up to the first that raises: [its index, its
        exception]; None when none raised."""
        if not isinstance(calls, list):
            raise Broken("dropped calls that are not a list")
        for index, call in enumerate(calls):
            if not (isinstance(call, list) and len(call) == 3 and call[0] in ("call", "method")):
                raise Broken("a malformed dropped call")
            do, args, named = call
            try:
                OPERATIONS[do](
                    *[a if type(a) in _SCALARS else self.decode(a) for a in args],
                    **{k: self.decode(v) for k, v in named},
                )
            except Stopped:
                raise
            except BaseException as exc:
                return [index, exc]
        return None

    def trace(self, error: BaseException) -> str:
        return self._describe(error)

    def serve_forever(self) -> None:
        """Serve requests until the tests' process ends."""
        while True:
            self.wire.send(self.serve(self.wire.receive()))
