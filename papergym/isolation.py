"""Agent isolation: agent code runs in its own process and reaches the problem only by RPC.

One trial runs in two processes (``docs/contract.md``, "Isolation and threat model"):

- the *problem process* builds the Task, its training view and its Budget, evaluates the
  artifact and is the only process that sends the trial's row to the runner; it never
  executes agent code and never unpickles agent objects (only plain data, through
  :class:`_ProblemUnpickler`'s allow-list);
- the *agent process*, forked from it before the Task exists, runs ``Agent.__init__`` and
  ``solve`` and any code its artifact carries. It holds one pipe from the problem process
  and one to it, and nothing else: every other inherited file descriptor is closed, it runs
  in its own process group (killed whole at the end, with whatever it left behind), under
  address-space, CPU-time and process limits, and, when the runner is root, as an
  unprivileged user of its own (a uid no other process has) with its own HOME and TMPDIR.

The two talk through :class:`Endpoint`: a symmetric, re-entrant object RPC over the pipes.
Values cross as data (numbers, strings, containers, numpy arrays, tensors, modules and
dataclasses of the problem's own classes); anything else stays where it lives and the other
side gets a :class:`Proxy` whose attribute reads and calls run in the owner's process. So
``view.make_env()`` in the agent returns a proxy env whose ``step`` runs (and is metered) in
the problem process, and a policy returned by ``solve`` is called out of process, one
message pair per call, with a per-call timeout. A message of plain values (numbers, strings,
small containers, numpy arrays of plain number dtypes: every policy call and env step)
crosses in :mod:`papergym.wire`'s raw format, read by a parser that builds only such values;
any other message is pickled, and the problem side unpickles it through an allow-list.
The problem side refuses private names, the Task itself, writes to the Budget and the inner
env of a wrapper; its training objects are revoked once ``solve`` returns.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dataclasses
import enum
import fractions
import functools
import io
import math
import os
import pickle
import resource
import select
import shutil
import signal
import struct
import sys
import tempfile
import traceback
import types
from collections import OrderedDict
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from papergym import wire

CALL_TIMEOUT_S = 60.0  # the longest the problem waits for one answer of agent code
FILE_MB = 4096  # the largest file an agent process may write, by default
SHM_MB = 512  # the agent's private /dev/shm (root runner), at most
MAX_MESSAGE_BYTES = 1 << 31  # one message from the agent process, at most (2 GiB)
# Messages of plain values (numbers, strings, small containers, numpy arrays: a policy call,
# an env step) cross in papergym.wire's raw format instead of pickled; False pickles every
# message, as before that format existed (benchmarks/perf/isolation_overhead.py --wire pickle)
FAST_WIRE = True

# message kinds
_REQ, _OK, _ERR, _CLOSE = 0, 1, 2, 3
# request operations
_GETATTR, _CALL, _CALLMETHOD, _SETATTR, _COPY = range(5)

_ATOMS = frozenset({int, float, bool, str, bytes, type(None), complex, pickle.PickleBuffer})
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset, slice, range, bytearray, OrderedDict})
_FUNCTIONS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
              types.BuiltinMethodType, types.GeneratorType, types.LambdaType, types.ModuleType)
# Problem-side packages: their classes may cross from the agent as data (the problem's own
# types, e.g. a FedAlgorithm or a tinylm GPT, whose code is the problem's, not the agent's).
TRUSTED_PREFIXES = ("papergym.problem", "papergym.envs.", "papergym.tinylm", "papergym.maxcut",
                    "gymnasium.spaces", "torch.nn.modules", "torch.nn.parameter")
# Agent-side names the problem side may call on its own objects' proxies (dunders forwarded).
_FORWARDED = frozenset({"__call__", "__len__", "__getitem__", "__iter__", "__next__",
                        "__contains__", "__bool__"})
# A wrapper's way down to the raw, unmetered environment.
_WRAPPER_NAMES = frozenset({"env", "get_wrapper_attr", "set_wrapper_attr", "aec_env",
                            "par_env", "budget_free"})
_BUDGET_READ = frozenset({"remaining", "as_dict", "limits", "used"})


_in_agent_process = False  # set in a sandboxed agent process, right after its fork


def in_agent_process() -> bool:
    """Whether this process is a sandboxed agent process (where submitted code runs)."""
    return _in_agent_process


class ProblemRefused(RuntimeError):
    """An agent tried to build a problem of its own (an unmetered copy of what it is scored
    on); it trains only on the view the problem hands it."""


def refuse_problem_in_agent(what: str) -> None:
    """Raise :class:`ProblemRefused` when called in an agent process."""
    if _in_agent_process:
        raise ProblemRefused(
            f"{what} is refused inside an agent process: an agent trains only on the view "
            "and budget its solve() receives (view.make_env(), view.make_vector_env()), "
            "which the problem meters")


def _refuse_registered_problems() -> None:
    """In the agent process: ``gymnasium.make`` of a papergym id, and constructing a
    registered problem's env class or calling its factory, raise ProblemRefused."""
    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is not None:
        for env_id, env_spec in list(gymnasium.registry.items()):
            if env_id.startswith("papergym/"):
                def refused(*args: Any, _id: str = env_id, **kwargs: Any) -> Any:
                    refuse_problem_in_agent(f"gymnasium.make({_id!r})")

                env_spec.entry_point = refused
                env_spec.vector_entry_point = refused
    registry = sys.modules.get("papergym.registry")
    for problem in getattr(registry, "_PROBLEMS", {}).values():
        target = problem.entry_point
        if isinstance(target, str):
            module_name, _, attr = target.partition(":")
        else:
            module_name = getattr(target, "__module__", "") or ""
            attr = getattr(target, "__qualname__", "") or ""
        module = sys.modules.get(module_name)  # loaded ones only: importing is the agent's
        built = getattr(module, attr, None) if module is not None and attr else None
        what = f"building {problem.id} ({module_name}:{attr})"
        if isinstance(built, type):
            def refused_init(self: Any, *args: Any, _what: str = what, **kwargs: Any) -> None:
                refuse_problem_in_agent(_what)

            with contextlib.suppress(TypeError, AttributeError):
                built.__init__ = refused_init  # type: ignore[misc]
        elif callable(built):
            def refused_factory(*args: Any, _what: str = what, **kwargs: Any) -> Any:
                refuse_problem_in_agent(_what)

            setattr(module, attr, refused_factory)


class IsolationError(RuntimeError):
    """The agent process broke the protocol, died, or stopped answering."""


class AgentDied(IsolationError):
    pass


class CallTimeout(IsolationError, TimeoutError):
    pass


class RemoteError(RuntimeError):
    """An exception raised on the other side whose type cannot be rebuilt here."""


# ----------------------------------------------------------------------------- tensors


def _rebuild_tensor(array: np.ndarray, dtype: str, requires_grad: bool, parameter: bool) -> Any:
    import torch

    torch_dtype = getattr(torch, dtype)
    if not isinstance(torch_dtype, torch.dtype):
        raise pickle.UnpicklingError(f"not a tensor dtype: {dtype!r}")
    tensor = torch.from_numpy(np.array(array, copy=True))
    if torch_dtype == torch.bfloat16:
        tensor = tensor.view(torch.bfloat16)
    tensor = tensor.to(torch_dtype)
    if parameter:
        return torch.nn.Parameter(tensor, requires_grad=requires_grad)
    return tensor.requires_grad_(requires_grad) if tensor.is_floating_point() else tensor


def _rebuild_array(data: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape).copy()


def _rebuild_scalar(data: bytes, dtype: str) -> np.generic:
    return np.frombuffer(data, dtype=np.dtype(dtype))[0]


def _plain_dtype(dtype: np.dtype) -> bool:
    return dtype.fields is None and not dtype.hasobject and dtype.subdtype is None


def _reduce(obj: Any) -> Any:
    """numpy arrays and scalars as (bytes, dtype, shape): one message element instead of
    numpy's multi-object reduction (policy observations are mostly small arrays); tensors
    as numpy arrays (torch's own pickling would call ``torch.load``)."""
    t = type(obj)
    if t is np.ndarray and _plain_dtype(obj.dtype):
        return _rebuild_array, (obj.tobytes(), obj.dtype.str, obj.shape)
    if isinstance(obj, np.generic) and t.__module__ == "numpy" and _plain_dtype(obj.dtype):
        return _rebuild_scalar, (obj.tobytes(), obj.dtype.str)
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(obj, torch.Tensor):
        return NotImplemented
    t = obj.detach().cpu()
    if t.layout != torch.strided:
        t = t.to_dense()
    dtype = str(t.dtype).removeprefix("torch.")
    array = t.contiguous().view(torch.int16).numpy() if t.dtype == torch.bfloat16 \
        else t.contiguous().numpy()
    return _rebuild_tensor, (array, dtype, bool(obj.requires_grad),
                             isinstance(obj, torch.nn.Parameter))


# ----------------------------------------------------------------------------- what is data


def _module_of(obj: Any) -> str:
    return getattr(type(obj), "__module__", "") or ""


def _is_numeric_library_value(obj: Any) -> bool:
    if isinstance(obj, (np.ndarray, np.generic, np.dtype, np.random.Generator,
                        np.random.BitGenerator, np.random.SeedSequence)):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, (torch.Tensor, torch.dtype, torch.Size,
                                                   torch.device))


def problem_sends_by_value(obj: Any) -> bool:
    """Problem -> agent: data by value; the problem's services (Task, Budget, envs, views,
    oracles, sandboxes: any instance of a problem class that is not a dataclass, enum or
    tinylm model) stay in the problem process and cross as proxies."""
    t = type(obj)
    if t in _CONTAINERS or t is _Copy or isinstance(obj, type):
        return True
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return _importable(obj)  # a module-level function crosses by name; closures do not
    if isinstance(obj, (*_FUNCTIONS, functools.partial)):
        return False
    if _is_numeric_library_value(obj):
        return True
    from papergym.problem import Budget, Task

    if isinstance(obj, (Task, Budget)):
        return False
    if isinstance(obj, (enum.Enum, fractions.Fraction)):
        return True
    module = _module_of(obj)
    if module.startswith(("papergym.tinylm", "gymnasium.spaces", "torch.nn.")):
        return True
    if module.startswith(("papergym.", "gymnasium", "pettingzoo")):
        # a frozen dataclass of the problem is a record (a question, an instance, a
        # setting); anything else of the problem is a service (view, env, world, sandbox)
        params = getattr(type(obj), "__dataclass_params__", None)
        return params is not None and params.frozen
    if dataclasses.is_dataclass(obj):
        return True
    if hasattr(obj, "step") and hasattr(obj, "reset"):
        return False  # env-like
    if isinstance(obj, tuple):  # named tuples
        return True
    return True  # third-party data (graphs, sparse matrices, ...)


def agent_sends_by_value(obj: Any) -> bool:
    """Agent -> problem: only what :class:`_ProblemUnpickler` accepts goes by value;
    the agent's own objects (policies, routines, its classes) stay in the agent process."""
    t = type(obj)
    if t in _CONTAINERS:
        return True
    if _is_numeric_library_value(obj) or isinstance(obj, fractions.Fraction):
        return True
    if isinstance(obj, type):
        module = getattr(obj, "__module__", "") or ""
        return (module, obj.__qualname__) in _SAFE_GLOBALS \
            or module.split(".")[0] in ("numpy", "torch") \
            or _trusted_module(module) and not _forbidden_class(obj)
    if isinstance(obj, _FUNCTIONS) or callable(obj) and _numpy_helper_name(obj):
        return module_function_allowed(obj)
    return _trusted_module(_module_of(obj)) and not _forbidden_class(t)


def _importable(obj: Any) -> bool:
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    target: Any = module
    for part in (getattr(obj, "__qualname__", "") or "<none>").split("."):
        target = getattr(target, part, None)
    return target is obj


def _numpy_helper_name(obj: Any) -> bool:
    name = getattr(obj, "__name__", "") or ""
    return name in _NUMPY_FUNCTIONS or name.startswith("__pyx_unpickle_")


def module_function_allowed(obj: Any) -> bool:
    """numpy's pickle helpers (reconstructors) are sent by name; other functions by reference."""
    return _numpy_helper_name(obj) and \
        (getattr(obj, "__module__", "") or "").split(".")[0] == "numpy"


def _trusted_module(module: str) -> bool:
    return module.startswith(TRUSTED_PREFIXES)


def _forbidden_class(cls: type) -> bool:
    import gymnasium as gym

    from papergym.problem import Budget, Task

    return issubclass(cls, (Task, Budget, gym.Env, BaseException))


_SAFE_GLOBALS = {
    ("builtins", name): getattr(builtins, name)
    for name in ("list", "dict", "set", "frozenset", "tuple", "slice", "range", "complex",
                 "bytearray", "bytes", "int", "float", "bool", "str", "object")
}
_SAFE_GLOBALS.update({
    ("collections", "OrderedDict"): OrderedDict,
    ("fractions", "Fraction"): fractions.Fraction,
    ("copyreg", "_reconstructor"): __import__("copyreg")._reconstructor,
    ("papergym.isolation", "_rebuild_tensor"): _rebuild_tensor,
    ("papergym.isolation", "_rebuild_array"): _rebuild_array,
    ("papergym.isolation", "_rebuild_scalar"): _rebuild_scalar,
})
_NUMPY_FUNCTIONS = {"_reconstruct", "scalar", "_frombuffer", "__generator_ctor",
                    "__bit_generator_ctor", "__randomstate_ctor"}


class _Pickler(pickle.Pickler):
    def __init__(self, file: Any, persistent: Callable[[Any], Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._persistent = persistent

    def persistent_id(self, obj: Any) -> Any:
        return self._persistent(obj)

    def reducer_override(self, obj: Any) -> Any:
        return _reduce(obj)


class _ProblemUnpickler(pickle.Unpickler):
    """The problem process's unpickler: an allow-list, so agent bytes never become agent code.

    Globals: plain builtins, numpy's array/scalar/dtype/Generator reconstructors, torch
    dtypes and sizes, this module's tensor rebuild, and classes defined in the problem's own
    packages (``TRUSTED_PREFIXES``; no Task, Budget, env or exception). Every other object
    arrives as a persistent reference (a proxy to the agent process)."""

    def __init__(self, data: bytes, endpoint: Endpoint) -> None:
        super().__init__(io.BytesIO(data))
        self.endpoint = endpoint

    def persistent_load(self, pid: Any) -> Any:
        return self.endpoint._persistent_load(pid)

    def _recording(self, ctor: Callable[..., Any]) -> Callable[..., Any]:
        def make(*args: Any) -> Any:
            generator = ctor(*args)
            self.endpoint.decoded_generators.append(generator)
            return generator

        return make

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return _SAFE_GLOBALS[(module, name)]
        numpy_helper = name in _NUMPY_FUNCTIONS or name.startswith("__pyx_unpickle_")
        if "." in name or name.startswith("__") and not numpy_helper:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed from agents")
        if module.split(".")[0] == "numpy":
            obj = super().find_class(module, name)
            if name == "__generator_ctor":
                return self._recording(obj)
            if numpy_helper or isinstance(obj, type) and (
                    issubclass(obj, (np.ndarray, np.generic, np.dtype, np.random.Generator,
                                     np.random.BitGenerator, np.random.SeedSequence))):
                return obj
        elif module == "torch":
            torch = sys.modules.get("torch")
            obj = getattr(torch, name, None) if torch is not None else None
            if isinstance(obj, torch.dtype) or obj in (torch.Size, torch.device):
                return obj
        elif _trusted_module(module) and module in sys.modules:
            obj = getattr(sys.modules[module], name, None)
            if isinstance(obj, type) and obj.__module__ == module and not _forbidden_class(obj):
                return obj
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed from agents")


def _holds_proxy(value: Any, depth: int = 0) -> bool:
    if isinstance(value, (Proxy, _Method)):
        return True
    if depth < 4 and type(value) in _CONTAINERS and not isinstance(value, (bytes, bytearray)):
        items = value.items() if isinstance(value, dict) else value
        return any(_holds_proxy(v, depth + 1) for v in (
            (x for kv in items for x in kv) if isinstance(value, dict) else items))
    return False


def _data_only(value: Any) -> Any:
    """A torch module from the agent crosses as data: its class (allow-listed by the
    unpickler), parameters, buffers and plain attributes. Hooks are emptied and any attribute
    that reaches back into the agent process (an agent function or object: a proxy) is dropped,
    so nothing the problem calls on it runs agent code."""
    torch = sys.modules.get("torch")
    if torch is None:
        return value
    seen: set[int] = set()

    def visit(obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > 6:
            return
        seen.add(id(obj))
        if isinstance(obj, torch.nn.Module):
            for module in obj.modules():
                state = vars(module)
                for name, attr in list(state.items()):
                    if "hook" in name and isinstance(attr, dict):
                        attr.clear()
                    elif _holds_proxy(attr):
                        del state[name]
            return
        if type(obj) in _CONTAINERS and not isinstance(obj, (bytes, bytearray, range, slice)):
            for item in (obj.values() if isinstance(obj, dict) else obj):
                visit(item, depth + 1)
        elif _trusted_module(_module_of(obj)) and hasattr(obj, "__dict__"):
            for item in vars(obj).values():
                visit(item, depth + 1)

    visit(value, 0)
    return value


class _AgentUnpickler(pickle.Unpickler):
    """The agent process's unpickler: the problem is trusted, only references are special."""

    def __init__(self, file: Any, endpoint: Endpoint) -> None:
        super().__init__(file)
        self.endpoint = endpoint

    def persistent_load(self, pid: Any) -> Any:
        return self.endpoint._persistent_load(pid)


# ----------------------------------------------------------------------------- proxies


class Proxy:
    """An object that lives in the other process; attribute reads and calls go there."""

    __slots__ = ("_endpoint", "_oid", "_methods", "__weakref__")

    def __init__(self, endpoint: Endpoint, oid: int) -> None:
        object.__setattr__(self, "_endpoint", endpoint)
        object.__setattr__(self, "_oid", oid)
        object.__setattr__(self, "_methods", {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        methods = object.__getattribute__(self, "_methods")
        if name in methods:
            return methods[name]
        return self._endpoint.request(_GETATTR, self._oid, name, (), {}, proxy=self)

    def __setattr__(self, name: str, value: Any) -> None:
        self._endpoint.request(_SETATTR, self._oid, name, (value,), {})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._endpoint.request(_CALL, self._oid, None, args, kwargs)

    def _forward(name: str) -> Callable[..., Any]:  # noqa: N805 - builds the dunders below
        def method(self: Proxy, *args: Any) -> Any:
            return self._endpoint.request(_CALLMETHOD, self._oid, name, args, {})

        method.__name__ = name
        return method

    __len__ = _forward("__len__")
    __getitem__ = _forward("__getitem__")
    __iter__ = _forward("__iter__")
    __next__ = _forward("__next__")
    __contains__ = _forward("__contains__")
    __bool__ = _forward("__bool__")
    del _forward

    def __deepcopy__(self, memo: Any) -> Any:
        return self._endpoint.request(_COPY, self._oid, None, (), {})

    __copy__ = __deepcopy__  # type: ignore[assignment]

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("an object of the other process cannot be pickled")

    def __repr__(self) -> str:
        return f"<remote object #{self._oid}>"


class _Method:
    """A bound method of a remote object: one message pair per call."""

    __slots__ = ("_endpoint", "_oid", "_name")

    def __init__(self, endpoint: Endpoint, oid: int, name: str) -> None:
        self._endpoint, self._oid, self._name = endpoint, oid, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._endpoint.request(_CALLMETHOD, self._oid, self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<remote method {self._name} of #{self._oid}>"


class _AttributesOnly:
    """The problem's raw env behind ``wrapper.unwrapped``: readable state, no methods."""

    def __init__(self, target: Any) -> None:
        self.target = target


# ----------------------------------------------------------------------------- endpoint


class Endpoint:
    """One side of the RPC. ``side`` is ``"problem"`` (restricted decoding, guarded
    exports) or ``"agent"``. Calls nest: while one side waits for an answer it serves the
    other side's requests, so callbacks in both directions work on one channel.

    ``conn`` is read from and, without ``write_fd``, written to (a socket); with ``write_fd``
    messages go out there (a pipe pair, as :class:`AgentProcess` connects the two processes)."""

    def __init__(self, conn: Connection, side: str, write_fd: int | None = None) -> None:
        self.conn = conn
        self.write_fd = conn.fileno() if write_fd is None else write_fd
        self._own_write_fd = write_fd is not None  # closed with the connection
        self.side = side
        self.exports: dict[int, Any] = {}
        self._ids: dict[int, int] = {}
        self.pinned: set[int] = set()  # ids of objects that always cross as references
        # numpy Generators an agent passes to the problem cross as copies; the problem sends
        # their final states back, so the agent's generator advances as it would in-process
        self._generators: list[Any] | None = None
        self.decoded_generators: list[Any] = []
        self._proxies: dict[int, Proxy] = {}
        self._next = 1 if side == "problem" else -1  # distinct signs: no id confusion
        self._rid = 0
        self.reply_timeout: float | None = None
        self.closed = False
        self.calls = 0
        self.fast_wire = FAST_WIRE
        self._inbox = bytearray()  # bytes read past the last message
        self._poller: Any = None  # a select.poll of the read end, made on the first wait

    # -- encoding ------------------------------------------------------------------------
    def export(self, obj: Any) -> int:
        oid = self._ids.get(id(obj))
        if oid is None or self.exports.get(oid) is not obj:
            oid = self._next
            self._next += 1 if self.side == "problem" else -1
            self.exports[oid] = obj
            self._ids[id(obj)] = oid
        return oid

    def revoke(self) -> None:
        """Forget every exported object: the agent can no longer reach them."""
        self.exports.clear()
        self._ids.clear()
        self.pinned.clear()

    def _persistent_id(self, obj: Any) -> Any:
        t = type(obj)
        if t in _ATOMS or obj is _rebuild_array or obj is _rebuild_scalar \
                or obj is _rebuild_tensor:
            return None
        if t is Proxy:
            if obj._endpoint is not self:
                raise IsolationError("a proxy of another trial cannot be sent")
            return ("yours", obj._oid)
        if t is _Method:
            return ("yours-method", obj._oid, obj._name)
        remote = getattr(obj, "_papergym_remote", None) if self.side == "agent" else None
        if type(remote) is Proxy and remote._endpoint is self:
            return ("yours", remote._oid)
        by_value = problem_sends_by_value if self.side == "problem" else agent_sends_by_value
        if id(obj) not in self.pinned and by_value(obj):
            if t is np.random.Generator and self._generators is not None \
                    and all(g is not obj for g in self._generators):
                self._generators.append(obj)
            return None
        if self.side == "problem" and _is_gym_env(obj):
            return ("mine", self.export(obj), "env")  # the agent gets a RemoteEnv
        return ("mine", self.export(obj))

    def encode(self, message: Any) -> bytes:
        if self.fast_wire:
            data = wire.encode(message, self.pinned)
            if data is not None:
                return data
        buffer = io.BytesIO()
        try:
            _Pickler(buffer, self._persistent_id).dump(message)
        except (pickle.PicklingError, TypeError, AttributeError):
            if message[0] != _OK:
                raise
            # a value that does not pickle crosses whole, as a proxy
            whole = message[2]
            buffer = io.BytesIO()
            _Pickler(buffer, lambda o: ("mine", self.export(o)) if o is whole
                     else self._persistent_id(o)).dump(message)
        return buffer.getvalue()

    def decode(self, data: bytes) -> Any:
        if data[:1] == _WIRE_MAGIC:  # plain values only: nothing to allow-list or strip
            try:
                return wire.decode(data)
            except wire.WireError as err:
                raise IsolationError(f"malformed message from the {_OTHER[self.side]} "
                                     f"process: {err}") from None
        if self.side == "problem":
            return _data_only(_ProblemUnpickler(data, self).load())
        return _AgentUnpickler(io.BytesIO(data), self).load()

    def _persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid or pid[0] not in ("mine", "yours",
                                                                    "yours-method"):
            raise pickle.UnpicklingError(f"bad reference {pid!r}")
        if pid[0] == "mine":
            oid = pid[1]
            if not isinstance(oid, int) or (oid > 0) == (self.side == "problem"):
                raise pickle.UnpicklingError(f"bad reference {pid!r}")
            proxy = self._proxies.get(oid)
            if proxy is None:
                proxy = self._proxies[oid] = Proxy(self, oid)
                if len(pid) > 2 and pid[2] == "env" and self.side == "agent":
                    proxy = self._proxies[oid] = _remote_env(proxy)
            return proxy
        obj = self._lookup(pid[1])
        if pid[0] == "yours-method":
            self._check_access(obj, pid[2])
            return getattr(obj, pid[2])
        return obj

    # -- transport -----------------------------------------------------------------------
    def send(self, message: Any) -> None:
        self._write(self.encode(message))

    def receive(self) -> Any:
        try:
            data = self._read_message()
        except CallTimeout:
            raise
        except (EOFError, OSError) as err:
            raise AgentDied("the other process closed the connection") from err
        self.decoded_generators = []
        message = self.decode(data)
        if not isinstance(message, tuple) or not message or message[0] not in (
                _REQ, _OK, _ERR, _CLOSE):
            raise IsolationError("malformed message")
        if message[0] != _REQ:
            self.decoded_generators = []
        return message

    def _write(self, data: bytes) -> None:
        """Send one message, framed as ``Connection.send_bytes`` frames it; a small one
        with one write(2) and no per-call checks of the Connection object."""
        size = len(data)
        if size > 0x7FFFFFFF:
            header = _FRAME.pack(-1) + _LONG_FRAME.pack(size)
        else:
            header = _FRAME.pack(size)
        fd = self.write_fd
        if size <= _READ_CHUNK:
            self._write_all(fd, header + data)
        else:  # no copy of a large message just to prefix its length
            self._write_all(fd, header)
            self._write_all(fd, data)

    @staticmethod
    def _write_all(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def _read_message(self) -> bytes:
        """The next message as ``Connection.send_bytes`` framed it (a 4-byte big-endian
        length; -1 and an 8-byte length past 2 GiB): one read(2) for a small message where
        ``Connection.recv_bytes`` makes two, bytes read past it kept for the next one. With a
        reply timeout, every wait for more bytes is bounded by it (a frame cut short stalls
        no longer than a missing one)."""
        inbox = self._inbox
        if not inbox:
            chunk = self._read_some(_READ_CHUNK)
            if len(chunk) >= 4 and len(chunk) == 4 + _FRAME.unpack_from(chunk)[0]:
                return chunk[4:]  # the common case: exactly one message arrived
            inbox += chunk
        while True:
            head, size = 0, 0
            if len(inbox) >= 4:
                size, head = _FRAME.unpack_from(inbox)[0], 4
                if size == -1:
                    size, head = (_LONG_FRAME.unpack_from(inbox, 4)[0], 12) \
                        if len(inbox) >= 12 else (0, 0)
                if head and not 0 <= size <= MAX_MESSAGE_BYTES:
                    raise OSError(f"bad message length {size}")
            if head and len(inbox) >= head + size:
                data = bytes(inbox[head:head + size])
                del inbox[:head + size]
                return data
            missing = head + size - len(inbox) if head else 12 - len(inbox)
            inbox += self._read_some(min(max(missing, _READ_CHUNK), 16 << 20))

    def _read_some(self, most: int) -> bytes:
        if self.reply_timeout is not None and not self._readable(self.reply_timeout):
            raise CallTimeout(f"agent code did not answer within {self.reply_timeout:g}s")
        chunk = os.read(self.conn.fileno(), most)
        if not chunk:
            raise EOFError
        return chunk

    def _readable(self, timeout_s: float) -> bool:
        """Whether a message (or the end of the connection) arrives within ``timeout_s``:
        one poll(2) on a poller kept for the connection (``Connection.poll`` builds a new
        selector on every call)."""
        if self._poller is None:
            self._poller = select.poll()
            self._poller.register(self.conn.fileno(), select.POLLIN)
        return bool(self._poller.poll(max(0, math.ceil(timeout_s * 1000))))

    def request(self, op: int, oid: int, name: str | None, args: tuple, kwargs: dict,
                proxy: Proxy | None = None) -> Any:
        if self.closed:
            raise IsolationError("the connection to the other process is closed")
        self._rid += 1
        rid = self._rid
        self.calls += 1
        sent: list[Any] = []
        if self.side == "agent":
            self._generators = sent
        try:
            data = self.encode((_REQ, rid, op, oid, name, args, kwargs))
        finally:
            self._generators = None
        self._write(data)
        while True:
            message = self.receive()
            kind = message[0]
            if kind == _REQ:
                self._serve(message)
            elif kind == _CLOSE:
                self.closed = True
                raise AgentDied("the other process closed the session")
            elif message[1] != rid:
                raise IsolationError("answer out of order")
            elif kind == _OK:
                value = message[2]
                states = message[3] if len(message) > 3 else None
                if sent and isinstance(states, list) and len(states) == len(sent):
                    for generator, state in zip(sent, states):
                        generator.bit_generator.state = state
                if op == _GETATTR and isinstance(value, tuple) and len(value) == 2 \
                        and value[0] == "__method__" and proxy is not None:
                    method = _Method(self, oid, name)  # type: ignore[arg-type]
                    object.__getattribute__(proxy, "_methods")[name] = method
                    return method
                return value
            else:
                raise _rebuild_error(*message[2:])

    def serve_forever(self) -> None:
        """Answer requests until the other side closes the session."""
        while True:
            try:
                message = self.receive()
            except AgentDied:
                return
            if message[0] == _CLOSE:
                return
            if message[0] == _REQ:
                self._serve(message)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError, ValueError):
                self._write(pickle.dumps((_CLOSE,)))
        if self._own_write_fd:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
        with contextlib.suppress(OSError):
            self.conn.close()

    # -- serving -------------------------------------------------------------------------
    def _lookup(self, oid: Any) -> Any:
        if not isinstance(oid, int) or oid not in self.exports:
            raise PermissionError("this object is no longer available to the agent (the "
                                  "training view closes when solve returns)")
        return self.exports[oid]

    def _check_access(self, obj: Any, name: str | None) -> None:
        if self.side != "problem":
            return
        if name is None:
            return
        if not isinstance(name, str):
            raise TypeError("attribute names are strings")
        if name.startswith("_") and name not in _FORWARDED:
            raise AttributeError(f"{type(obj).__name__}.{name} is private to the problem")
        budget_type, _ = _budget_and_task()
        if isinstance(obj, budget_type) and name not in _BUDGET_READ:
            raise PermissionError(f"the budget is read-only for agents (Budget.{name})")
        if isinstance(obj, _AttributesOnly):
            return
        if name in _WRAPPER_NAMES and hasattr(obj, "unwrapped"):
            raise PermissionError(f"{type(obj).__name__}.{name} reaches past the problem's "
                                  "metering; use the env you were given")

    def _guard_result(self, value: Any) -> Any:
        if self.side != "problem":
            return value
        if isinstance(value, _budget_and_task()[1]):
            raise PermissionError("the Task is not part of the agent's view")
        return value

    def _serve(self, message: tuple) -> None:
        _, rid, op, oid, name, args, kwargs = message
        generators, self.decoded_generators = self.decoded_generators, []
        try:
            obj = self._lookup(oid)
            if not isinstance(args, tuple) or not isinstance(kwargs, dict):
                raise TypeError("malformed call")
            self._check_access(obj, name)
            if op == _GETATTR:
                value = self._getattr(obj, name)
            elif op == _CALL:
                if isinstance(obj, _AttributesOnly):
                    raise PermissionError("the raw environment is read-only")
                value = self._guard_result(obj(*args, **kwargs))
            elif op == _CALLMETHOD:
                if isinstance(obj, _AttributesOnly):
                    raise PermissionError("the raw environment is read-only; use the metered "
                                          "env for step/reset")
                value = self._guard_result(getattr(obj, name)(*args, **kwargs))
            elif op == _SETATTR:
                if self.side == "problem":
                    raise PermissionError("the problem's objects are read-only for agents")
                setattr(obj, name, args[0])
                value = None
            elif op == _COPY:
                if self.side == "problem":
                    raise PermissionError("problem objects cannot be copied by the agent")
                value = copy.deepcopy(obj)
            else:
                raise TypeError(f"unknown operation {op!r}")
            states = [g.bit_generator.state for g in generators]
            reply = (_OK, rid, value, states) if states else (_OK, rid, value)
            data = self.encode(reply)
        except BaseException as err:  # noqa: BLE001 - every failure goes back as an answer
            if isinstance(err, (KeyboardInterrupt, SystemExit)) and self.side == "problem":
                raise
            data = pickle.dumps((_ERR, rid, type(err).__module__, type(err).__qualname__,
                                 _message(err), traceback.format_exc()))
        self._write(data)

    def _getattr(self, obj: Any, name: str) -> Any:
        if isinstance(obj, _AttributesOnly):
            value = getattr(obj.target, name)
            if callable(value) and not isinstance(value, type):
                raise PermissionError(f"{name} of the raw environment is not callable by agents")
            if problem_sends_by_value(value):
                return self._guard_result(value)
            return _copy_or_read_only(value)
        if self.side == "problem" and name == "unwrapped" and hasattr(obj, "step"):
            return _AttributesOnly(obj.unwrapped)
        value = getattr(obj, name)
        if isinstance(value, types.MethodType) and value.__self__ is obj:
            return ("__method__", name)
        return self._guard_result(value)


_WIRE_MAGIC = bytes([wire.MAGIC])
_FRAME, _LONG_FRAME = struct.Struct("!i"), struct.Struct("!Q")  # Connection's framing
_READ_CHUNK = 1 << 16
_OTHER = {"problem": "agent", "agent": "problem"}


@functools.cache
def _budget_and_task() -> tuple[type, type]:
    """papergym.problem's Budget and Task (imported on first use: that module imports this
    one), looked up once instead of by an import statement on every served call."""
    from papergym.problem import Budget, Task

    return Budget, Task


def _is_gym_env(obj: Any) -> bool:
    gym = sys.modules.get("gymnasium")
    return gym is not None and isinstance(obj, gym.Env)


class _Copy:
    """A problem object sent as a deep copy (state of the raw env, e.g. a body layout)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __reduce__(self) -> Any:
        return pickle.loads, (self.data,)


def _copy_or_read_only(value: Any) -> Any:
    """Raw-env state as a copy when it holds no service (no env, Task, Budget, closure);
    otherwise a read-only view of it."""
    from papergym.problem import Budget, Task

    def refuse(o: Any) -> None:
        if isinstance(o, (Task, Budget)) or _is_gym_env(o) or isinstance(o, _FUNCTIONS):
            raise pickle.PicklingError("holds a service")
        return None

    buffer = io.BytesIO()
    pickler = _Pickler(buffer, refuse)
    try:
        pickler.dump(value)
    except Exception:  # noqa: BLE001 - not copyable: read attributes one by one instead
        return _AttributesOnly(value)
    return _Copy(buffer.getvalue())


def _remote_env(proxy: Proxy) -> Any:
    """A gymnasium.Env in the agent process whose every call runs in the problem process, so
    wrappers and libraries that check ``isinstance(env, gym.Env)`` accept it."""
    import gymnasium as gym

    class RemoteEnv(gym.Env):
        _papergym_remote = proxy

        def __init__(self) -> None:
            self.action_space = proxy.action_space
            self.observation_space = proxy.observation_space
            self.metadata = proxy.metadata
            self.render_mode = proxy.render_mode
            self._step, self._reset = proxy.step, proxy.reset

        def step(self, action: Any) -> Any:
            return self._step(action)

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
            return self._reset(seed=seed, options=options)

        def render(self) -> Any:
            return proxy.render()

        def close(self) -> None:
            proxy.close()

        @property
        def unwrapped(self) -> Any:  # type: ignore[override]
            return proxy.unwrapped

        @property
        def spec(self) -> Any:  # type: ignore[override]
            return proxy.spec

        @spec.setter
        def spec(self, value: Any) -> None:
            pass

        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return getattr(proxy, name)

    return RemoteEnv()


def _message(err: BaseException) -> str:
    try:
        return str(err)
    except Exception:  # noqa: BLE001
        return repr(type(err))


def _rebuild_error(module: Any, qualname: Any, text: Any, remote_tb: Any) -> BaseException:
    """The other side's exception as one of ours: a builtin or problem exception type is
    rebuilt (so ``except BudgetExceeded`` or ``except FloatingPointError`` work across the
    boundary); anything else becomes a RemoteError naming it."""
    text, qualname = str(text), str(qualname)
    cls: Any = None
    if module == "builtins":
        cls = getattr(builtins, qualname, None)
    elif isinstance(module, str) and module.startswith("papergym.") and module in sys.modules:
        cls = getattr(sys.modules[module], qualname, None)
    err: BaseException
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            err = cls(text)
        except Exception:  # noqa: BLE001
            err = RemoteError(f"{qualname}: {text}")
    else:
        err = RemoteError(f"{qualname}: {text}")
    err.remote_traceback = str(remote_tb)  # type: ignore[attr-defined]
    err.remote_type = qualname  # type: ignore[attr-defined]
    return err


# ----------------------------------------------------------------------------- agent process


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-trial limits of the agent process (and of the problem process's memory)."""

    memory_mb: int | None = None  # added address space (RLIMIT_AS); None: sized to the machine
    cpu_s: float | None = None  # CPU seconds (RLIMIT_CPU)
    file_mb: int = FILE_MB  # the largest file the agent may write (RLIMIT_FSIZE)
    nproc: int = 256  # processes and threads of the unprivileged user (RLIMIT_NPROC)
    call_timeout_s: float = CALL_TIMEOUT_S

    def resolved_memory_mb(self, workers: int | None = None) -> int:
        return self.memory_mb if self.memory_mb else default_memory_mb(workers)


def default_memory_mb(workers: int | None = None) -> int:
    """Each process of each of ``workers`` concurrent trials (a problem and an agent process
    each) gets 80% of physical memory / (2 * workers) of address space, so the caps together
    stay under the machine's memory (at least 1 GiB each)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    share = 0.8 * total / (2 * max(1, workers or os.cpu_count() or 1))
    return max(1024, int(share / (1 << 20)))


AGENT_UID_BASE = 1 << 22  # above every pid, below the 32-bit uid range; no passwd entry


def unprivileged_ids() -> tuple[int, int] | None:
    """(uid, gid) the agent process switches to when the runner is root: one of its own per
    trial (AGENT_UID_BASE + the problem process's pid), so agents of concurrent trials cannot
    signal, trace or read each other either."""
    if os.geteuid() != 0:
        return None
    uid = AGENT_UID_BASE + os.getpid()
    return uid, uid


def _readable_by_others(path: str) -> bool:
    """Whether a user other than the owner can reach and read ``path``."""
    import stat

    try:
        mode = os.stat(path).st_mode
        if not mode & stat.S_IROTH or stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(path)
        while parent and parent != os.path.dirname(parent):
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(parent)
    except OSError:
        return True  # missing entries cannot be read by anyone: nothing to remap
    return True


_roots: tuple[int, tuple[str, ...], list[str]] | None = None


def _loaded_modules() -> list[tuple[str, Any]]:
    """A snapshot of ``sys.modules``. Copying it allocates, so the garbage collector may run
    a finalizer that imports a module halfway through, and the copy raises "dictionary
    changed size during iteration" (seen in freshly forked agent processes); copy again."""
    while True:
        try:
            return list(sys.modules.items())
        except RuntimeError:
            continue


def _editable_tables() -> list[dict[str, Any]]:
    """The package-to-folder tables of setuptools' editable finders (``MAPPING``,
    ``NAMESPACES``): a package not imported yet is found through them, not sys.path."""
    return [table for name, module in _loaded_modules()
            if name.startswith("__editable__") and module is not None
            for table in (getattr(module, "MAPPING", None), getattr(module, "NAMESPACES", None))
            if isinstance(table, dict)]


def unreadable_import_roots() -> list[str]:
    """The folders imports come from (sys.path, and the folders of loaded packages: an
    editable install maps a package to a checkout folder on no sys.path entry) that other
    users cannot read, outermost only. Cached while the loaded modules stay the same: the
    problem process computes it before forking its agent, and the runner once for all
    trials' processes, so a trial's agent does not stat the tree again."""
    global _roots
    if _roots is not None and _roots[0] == len(sys.modules) and _roots[1] == tuple(sys.path):
        return _roots[2]
    entries = list(sys.path)
    for table in _editable_tables():
        entries += [os.path.dirname(p.rstrip("/")) for ps in table.values()
                    for p in ([ps] if isinstance(ps, str) else ps) if isinstance(p, str)]
    for _, module in _loaded_modules():
        paths = getattr(module, "__dict__", {}).get("__path__")
        if type(paths).__name__ == "_NamespacePath":
            paths = paths._path
        if isinstance(paths, list):
            entries += [os.path.dirname(p.rstrip("/")) for p in paths if isinstance(p, str)]
    roots: list[str] = []
    for entry in sorted({e.rstrip("/") for e in entries if e}, key=len):  # outer ones first
        if entry.startswith("/proc/") or any(entry == r or entry.startswith(r + "/")
                                             for r in roots):
            continue
        if os.path.isdir(entry) and not _readable_by_others(entry):
            roots.append(entry)
    _roots = (len(sys.modules), tuple(sys.path), roots)
    return roots


def _keep_import_paths_reachable() -> bool:
    """Import paths the agent's user could not read (a Python installed under /root):
    open each as a directory now, while still root, and point sys.path and every loaded
    package's __path__ at /proc/self/fd/N, so lazy imports in the agent still work after
    the uid change. Returns whether any path was remapped (the process must then stay
    dumpable, or /proc/self/fd is closed to it)."""
    mapping: dict[str, str] = {}
    for entry in unreadable_import_roots():
        fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY)
        mapping[entry] = f"/proc/self/fd/{fd}"
    if not mapping:
        return False

    def remap(path: str) -> str:
        for old, new in mapping.items():
            if path == old or path.startswith(old + "/"):
                return new + path[len(old):]
        return path

    sys.path[:] = [remap(p) for p in sys.path]
    for table in _editable_tables():
        for name, value in list(table.items()):
            if isinstance(value, str):
                table[name] = remap(value)
            elif isinstance(value, list):
                value[:] = [remap(p) if isinstance(p, str) else p for p in value]
    for _, module in _loaded_modules():
        paths = getattr(module, "__dict__", {}).get("__path__")
        if type(paths).__name__ == "_NamespacePath":
            paths = paths._path
        if isinstance(paths, list):
            paths[:] = [remap(p) if isinstance(p, str) else p for p in paths]
        # source files too: inspect.getsource, tracebacks and code hashes read them there
        file = getattr(module, "__dict__", {}).get("__file__")
        if isinstance(file, str) and remap(file) != file:
            with contextlib.suppress(AttributeError, TypeError):
                module.__file__ = remap(file)
                if module.__spec__ is not None and module.__spec__.origin == file:
                    module.__spec__.origin = remap(file)
    sys.path_importer_cache.clear()
    import importlib

    importlib.invalidate_caches()
    return True


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER, _PR_SET_DUMPABLE = 1, 36, 4


class AgentProcess:
    """The agent process of one trial, forked from the (problem) process that creates it.

    ``start()`` forks before the Task exists; the child sandboxes itself and serves a
    bootstrap object whose ``solve(view, budget, seed)`` builds the agent and runs it.
    ``close()`` kills the child's process group and every process it left behind."""

    def __init__(self, agent_factory: Callable[[], Any], limits: Limits,
                 plugin_file: str | None = None) -> None:
        self.agent_factory = agent_factory
        self.limits = limits
        self.plugin_file = plugin_file  # the one plug-in whose helper modules it may import
        self.pid = 0
        self.endpoint: Endpoint | None = None
        self.home: str | None = None
        self.usage: dict[str, float] = {}
        self.exit_status: int | None = None
        self.uid: int | None = None  # the agent's own uid (root runner), None otherwise

    def start(self) -> Endpoint:
        ids = unprivileged_ids()
        self.uid = ids[0] if ids is not None else None
        self.home = tempfile.mkdtemp(prefix="papergym-agent-")
        if ids is not None:
            os.chown(self.home, *ids)
            unreadable_import_roots()  # computed here, where the next trial's fork finds it
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphans of the agent reparent to us
        # Two pipes, not a socket pair: a round trip through pipes costs half as much
        # (one CPU, 64 bytes each way: 5 us vs 10 us) and a trial makes one per call.
        to_agent, from_problem = os.pipe()
        to_problem, from_agent = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the agent process
            code = 0
            try:
                os.close(from_problem)
                os.close(to_problem)
                _sandbox_self((to_agent, from_agent), parent, self.limits, ids, self.home,
                              self.plugin_file)
                endpoint = Endpoint(Connection(to_agent, writable=False), side="agent",
                                    write_fd=from_agent)
                endpoint.export(_Bootstrap(self.agent_factory))
                endpoint.serve_forever()
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 70
            finally:
                os._exit(code)
        os.close(to_agent)
        os.close(from_agent)
        self.pid = pid
        self.endpoint = Endpoint(Connection(to_problem, writable=False), side="problem",
                                 write_fd=from_problem)
        return self.endpoint

    def solve(self, view: Any, budget: Any, seed: int) -> Any:
        """Run ``agent.solve(view, budget, seed)`` in the agent process; the artifact comes
        back as data or as a proxy to the agent's object."""
        assert self.endpoint is not None
        if not (type(view) in _ATOMS or type(view) in _CONTAINERS
                or _is_numeric_library_value(view)):
            self.endpoint.pinned.add(id(view))  # a view object is a service, never data
        return self.endpoint.request(_CALLMETHOD, -1, "solve", (view, budget, seed), {})

    def produce(self) -> Any:
        """What the factory builds, computed in the agent process and returned as data (a
        plug-in's declarations: its file runs only here, never in the runner)."""
        assert self.endpoint is not None
        return self.endpoint.request(_CALLMETHOD, -1, "produce", (), {})

    def died(self) -> str | None:
        """Why the agent process ended, if it has: exit code or signal."""
        if self.pid == 0:
            return None
        if self.exit_status is None:
            try:
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            except ChildProcessError:
                return "vanished"
            if pid == 0:
                return None
            self._record(status, usage)
        return _describe_status(self.exit_status)

    def _record(self, status: int, usage: Any) -> None:
        self.exit_status = status
        self.usage = {"agent_cpu_s": usage.ru_utime + usage.ru_stime,
                      "agent_peak_rss_mib": usage.ru_maxrss / 1024}

    def close(self) -> None:
        if self.endpoint is not None:
            self.endpoint.close()
        if self.pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            if self.exit_status is None:
                try:
                    _, status, usage = os.wait4(self.pid, 0)
                    self._record(status, usage)
                except ChildProcessError:
                    pass
            _kill_leftovers(os.getpid(), self.pid)
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None
        if self.uid is not None:  # what it left in /tmp, /var/tmp, ... (pid, so uid, held)
            from papergym.tempclean import kill_processes_of, remove_files_of

            kill_processes_of(self.uid)
            remove_files_of(self.uid)
            self.uid = None


def _describe_status(status: int | None) -> str:
    if status is None:
        return "running"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig
        hint = {signal.SIGXCPU: " (CPU time limit)", signal.SIGKILL: ""}.get(sig, "")
        return f"killed by {name}{hint}"
    return f"exit code {os.WEXITSTATUS(status)}"


class _Bootstrap:
    def __init__(self, agent_factory: Callable[[], Any]) -> None:
        self.agent_factory = agent_factory

    def solve(self, view: Any, budget: Any, seed: int) -> Any:
        return self.agent_factory().solve(view, budget, seed)

    def produce(self) -> Any:
        return self.agent_factory()


def _sandbox_self(fds: tuple[int, ...], parent: int, limits: Limits, ids: tuple[int, int] | None,
                  home: str, plugin_file: str | None = None) -> None:
    """In the freshly forked agent process: own process group, limits, no inherited fds, and
    (as root) the unprivileged user."""
    global _in_agent_process
    _in_agent_process = True
    _refuse_registered_problems()
    # Its own process group, killed whole at the end. Not its own session: the kernel's
    # autogroup scheduler would put a new session in a new CPU group, which under load
    # costs milliseconds of wake-up latency on every call (measured: 20 us -> 600 us).
    os.setpgid(0, 0)
    # every inherited descriptor but stdio and our two pipes: the store, the result pipe
    low = 3
    for fd in sorted(fds):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _max_fd())
    set_memory_limit(limits.resolved_memory_mb())
    if limits.cpu_s:
        seconds = int(limits.cpu_s) + 1
        _setrlimit(resource.RLIMIT_CPU, seconds, seconds + 5)
    _setrlimit(resource.RLIMIT_CORE, 0)
    _setrlimit(resource.RLIMIT_FSIZE, limits.file_mb << 20)  # past it a write fails (EFBIG)
    os.umask(0o077)  # what it writes anywhere (the shared /tmp) is its own uid's alone
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    os.environ.update({"HOME": home, "TMPDIR": home, "TMP": home, "TEMP": home})
    tempfile.tempdir = home
    remapped = False
    if ids is not None:
        uid, gid = ids
        _private_mounts(home)
        if plugin_file is not None:
            from papergym.agent import add_plugin_folders

            # before the remap: the trial's own plug-in folder may be private too
            add_plugin_folders([plugin_file])
        remapped = _keep_import_paths_reachable()
        _setrlimit(resource.RLIMIT_NPROC, limits.nproc)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        os.chdir(home)
        os.environ.update({"USER": "papergym-agent", "LOGNAME": "papergym-agent"})
    # not dumpable: no ptrace or /proc/<pid>/mem access to us from processes of our uid;
    # a remapped import path needs /proc/self/fd, which only a dumpable process may read
    # (our uid is ours alone, so nobody else can use that)
    _prctl(_PR_SET_DUMPABLE, 1 if remapped else 0)
    # die with the problem process (armed after the uid change, which clears it)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(71)  # the problem process died before the death signal was armed


_CLONE_NEWNS, _MS_NOSUID, _MS_NODEV = 0x00020000, 0x2, 0x4
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000


def _private_mounts(home: str) -> int:
    """As root, before the uid change, in a mount namespace of this process alone: a private
    /dev/shm (a tmpfs of at most ``SHM_MB``, gone with the agent's processes), and an empty
    root-owned mode-0000 file bound over every declared held-out data file
    (:func:`papergym.problem.register_held_out_data`), so the agent's user cannot read them.
    Returns how many files were hidden (0 where the kernel refuses a namespace: a container
    without CAP_SYS_ADMIN, where the agent's own uid and the file modes are what is left)."""
    import ctypes

    from papergym.problem import held_out_data_files

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNS) != 0 or \
            libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return 0
    if os.path.isdir("/dev/shm"):
        libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV,
                   f"size={SHM_MB}m,mode=1777".encode())
    files = held_out_data_files()
    blank = os.path.join(home, ".held-out")
    os.close(os.open(blank, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0))
    os.chmod(blank, 0)
    hidden = 0
    for path in files:
        if libc.mount(blank.encode(), path.encode(), None, _MS_BIND, None) == 0:
            hidden += 1
    return hidden


def _setrlimit(which: int, soft: int, hard: int | None = None) -> None:
    _, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(which, (soft, hard))


def _max_fd() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 65536


def _children(pid: int, newer_than: int) -> list[int]:
    """Children of ``pid`` among the processes created after ``newer_than`` (the agent):
    only those can be the agent's leftovers, and reading fewer /proc entries is faster."""
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    if entries and max(entries) < newer_than:  # pid numbers wrapped around: look at all
        newer_than = 0
    found = []
    for entry in entries:
        if entry <= newer_than:
            continue
        try:
            fd = os.open(f"/proc/{entry}/stat", os.O_RDONLY)
            try:
                stat = os.read(fd, 512)
            finally:
                os.close(fd)
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(entry)
    return found


def _kill_leftovers(pid: int, agent: int) -> None:
    """Kill and reap every process the agent left behind (reparented to us, the subreaper),
    until none is left: a spawned process does not outlive its trial."""
    for _ in range(50):
        leftovers = _children(pid, agent)
        if not leftovers:
            return
        for child in leftovers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        for child in leftovers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)


def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def set_memory_limit(memory_mb: int) -> None:
    """Cap this process's address space at what it maps now plus ``memory_mb``: the trial's
    own allocations are what is limited, whatever the executor's process already maps
    (a forked runner, a Ray worker)."""
    _setrlimit(resource.RLIMIT_AS, _address_space_bytes() + (memory_mb << 20))
