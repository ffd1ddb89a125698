"""`@plain`: what `@dataclass` gives the small record classes on the `kyb query` path (an `__init__`
taking the annotated fields in order with their defaults, `repr`, `==`, `frozen=True` with a hash),
without importing `dataclasses`, which imports `inspect` (and with it ast, dis, tokenize): a third
of `python -c pass` on every CLI query (issue 27). `Factory(list)` is `field(default_factory=list)`.
Modules off that path keep using `dataclasses`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any, Callable

_MISSING = object()


class Factory:
    """A default made anew for each instance (dataclasses' `default_factory`)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def _init(name: str, names: tuple[str, ...], defaults: dict[str, Any]):
    """An `__init__(self, a, b=..., c=<fresh>)` made from source, as dataclasses makes it: a call
    binds its arguments in C, not through a loop over the fields (a query builds a few dozen)."""
    scope: dict[str, Any] = {"_set": object.__setattr__, "_FRESH": _MISSING}
    params, body = ["self"], []
    for n in names:
        d = defaults.get(n, _MISSING)
        if d is _MISSING:
            params.append(n)
            body.append(f"_set(self, {n!r}, {n})")
        elif isinstance(d, Factory):
            scope[f"_make_{n}"] = d.make
            params.append(f"{n}=_FRESH")
            body.append(f"_set(self, {n!r}, _make_{n}() if {n} is _FRESH else {n})")
        else:
            scope[f"_default_{n}"] = d
            params.append(f"{n}=_default_{n}")
            body.append(f"_set(self, {n!r}, {n})")
    source = f"def __init__({', '.join(params)}):\n    " + ("\n    ".join(body) or "pass") + "\n"
    exec(source, scope)  # noqa: S102 - the source is made here from the class's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{name}.__init__"
    return init


COMPILE_AFTER = 32  # instances bound by the loop before a class's __init__ is compiled


def _first_init(cls, names: tuple[str, ...], defaults: dict[str, Any]):
    """An `__init__` binding by a loop over the fields, which after COMPILE_AFTER instances puts the
    compiled one (_init) on the class: compiling was ~0.15 ms a class, ~2 ms of every one-shot
    `kyb query` (12 classes, a few instances each, issue 38), while a long-lived door soon binds in C."""
    qual = f"{cls.__name__}.__init__"
    made = [0]
    put = object.__setattr__
    at = {n: i for i, n in enumerate(names)}
    least = 1 + sum(1 for n in names if n not in defaults)

    def __init__(self, *args, **kwargs):
        made[0] += 1
        if made[0] > COMPILE_AFTER and cls.__dict__.get("__init__") is __init__:
            cls.__init__ = _init(cls.__name__, names, defaults)
        _check(qual, least, len(names) + 1, at, args, kwargs)
        for name, value in zip(names, args):
            put(self, name, value)
        missing = []
        for name in names[len(args):]:
            value = kwargs.get(name, _MISSING)
            if value is _MISSING:
                value = defaults.get(name, _MISSING)
                if value is _MISSING:
                    missing.append(name)
                    continue
                if isinstance(value, Factory):
                    value = value.make()
            put(self, name, value)
        if missing:
            raise TypeError(f"{qual}() missing {len(missing)} required positional argument"
                            f"{'s' if len(missing) > 1 else ''}: {_listed(missing)}")

    __init__.__qualname__ = qual
    return __init__


def _check(qual: str, least: int, most: int, at: dict, args: tuple, kwargs: dict) -> None:
    """The TypeErrors a compiled __init__ raises for too many arguments, an unknown or a repeated one."""
    for name in kwargs:  # the keywords first, as CPython binds them
        if name not in at:
            raise TypeError(f"{qual}() got an unexpected keyword argument {name!r}")
        if at[name] < len(args):
            raise TypeError(f"{qual}() got multiple values for argument {name!r}")
    given = len(args) + 1
    if given > most:
        takes = f"{most} positional argument{'s' if most != 1 else ''}" if least == most else \
            f"from {least} to {most} positional arguments"
        raise TypeError(f"{qual}() takes {takes} but {given} {'was' if given == 1 else 'were'} given")


def _listed(missing: list[str]) -> str:
    quoted = [repr(n) for n in missing]
    if len(quoted) == 1:
        return quoted[0]
    return (", ".join(quoted[:-1]) + ("," if len(quoted) > 2 else "") + " and " + quoted[-1])


def plain(cls=None, *, frozen: bool = False):
    """Give `cls` the dataclass methods for its annotated fields (see the module docstring)."""

    def wrap(cls):
        names = tuple(n for n in cls.__dict__.get("__annotations__", {}) if not n.startswith("__"))
        defaults: dict[str, Any] = {}
        for n in names:
            if n in cls.__dict__:
                defaults[n] = cls.__dict__[n]
                if isinstance(defaults[n], Factory):
                    delattr(cls, n)
            elif defaults:
                raise TypeError(f"{cls.__name__}: field {n!r} without a default follows one with a default")
        cls.__init__ = _first_init(cls, names, defaults)

        def __repr__(self) -> str:
            return f"{cls.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in names)

        cls.__repr__, cls.__eq__ = __repr__, __eq__
        cls.__match_args__ = names
        if frozen:
            def __setattr__(self, name, value):
                raise AttributeError(f"cannot assign to field {name!r} of a frozen {cls.__name__}")

            def __delattr__(self, name):
                raise AttributeError(f"cannot delete field {name!r} of a frozen {cls.__name__}")

            def __hash__(self) -> int:
                return hash(tuple(getattr(self, n) for n in names))

            cls.__setattr__, cls.__delattr__, cls.__hash__ = __setattr__, __delattr__, __hash__
        else:
            cls.__hash__ = None  # mutable and compared by value: unhashable, as a dataclass
        return cls

    return wrap if cls is None else wrap(cls)


def replace(obj, **changes):
    """A copy of a `@plain` instance with `changes` (dataclasses.replace for these classes)."""
    return obj.__class__(**{n: changes.pop(n, getattr(obj, n)) for n in obj.__match_args__}, **changes)
