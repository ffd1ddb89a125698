"""`@plain` (core/plain.py) behaves as `@dataclass` does for what the query path's records use:
fields in order with defaults, a fresh default per instance, repr, value equality, frozen + hash."""

from __future__ import annotations

import pytest

from kyb_cli.core.plain import Factory, plain


@plain
class Box:
    name: str
    tags: list[str] = Factory(list)
    size: int = 1


@plain(frozen=True)
class Point:
    x: int
    y: int = 0


def test_fields_bind_in_order_by_keyword_and_take_their_defaults():
    assert (Box("a").name, Box("a").tags, Box("a").size) == ("a", [], 1)
    b = Box("b", ["t"], size=3)
    assert (b.name, b.tags, b.size) == ("b", ["t"], 3)


def test_a_factory_default_is_made_anew_for_each_instance():
    one, two = Box("x"), Box("y")
    one.tags.append("t")
    assert two.tags == [] and "tags" not in Box.__dict__


def test_repr_and_value_equality_as_a_dataclass():
    assert repr(Box("a")) == "Box(name='a', tags=[], size=1)"
    assert Box("a") == Box("a") and Box("a") != Box("b") and Box("a") != Point(1)
    with pytest.raises(TypeError):
        hash(Box("a"))  # mutable and compared by value: unhashable


def test_frozen_refuses_assignment_and_hashes_by_value():
    p = Point(1, 2)
    with pytest.raises(AttributeError):
        p.x = 3
    with pytest.raises(AttributeError):
        del p.y
    assert {Point(1, 2), Point(1, 2)} == {p} and Point(1) == Point(1, 0)


@pytest.mark.parametrize("call", [lambda: Box(), lambda: Box("a", [], 1, 2), lambda: Box("a", name="b"),
                                  lambda: Box("a", colour="red")])
def test_a_missing_extra_repeated_or_unknown_argument_is_a_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_a_field_without_default_after_one_with_is_refused():
    with pytest.raises(TypeError):
        @plain
        class Bad:
            a: int = 1
            b: int


def test_replace_copies_a_plain_record_with_changes_as_dataclasses_replace_does():
    """relevance.for_question swaps the floor of a @plain Calibration: dataclasses.replace refuses
    a class that is not a dataclass, so @plain has its own `replace`."""
    from kyb_cli.core.plain import replace
    from kyb_cli.core.search.relevance import Calibration, for_question

    cal = Calibration(floor=0.3, floor_other=0.25, source="fit")
    moved = replace(cal, floor=0.1)
    assert (moved.floor, moved.floor_other, moved.source, cal.floor) == (0.1, 0.25, "fit", 0.3)
    assert for_question(cal, english=False).floor == 0.25 and for_question(cal, english=True) is cal
    with pytest.raises(TypeError):
        replace(cal, no_such_field=1)


def test_the_loop_binds_as_the_compiled_init_does_which_comes_after_enough_instances(monkeypatch):
    """A class compiles its __init__ only once it has made COMPILE_AFTER instances (issue 38: a
    one-shot query made 12 classes compile one each, ~2 ms); before and after, the same binding."""
    from kyb_cli.core import plain as module

    compiled = []
    real = module._init
    monkeypatch.setattr(module, "_init", lambda *a: compiled.append(a[0]) or real(*a))

    @plain
    class Late:
        a: int
        b: list = Factory(list)
        c: str = "c"

    @plain
    class Two:
        x: int
        y: int

    calls = [((1,), {}), ((1, [2]), {"c": "x"}), ((), {"a": 1, "c": "y"}), ((1, [], "z"), {})]
    errors = [((), {}), ((1, [], "c", 4), {}), ((1,), {"a": 2}), ((1,), {"d": 1}), ((1,), {"a": 2, "d": 1}),
              ((), {"b": []}), ((1, 2, 3, 4, 5), {"d": 1})]

    def outcome(args, kwargs, cls=Late):
        try:
            return repr(cls(*args, **kwargs))
        except TypeError as exc:
            return str(exc)

    two = [((), {}), ((1, 2, 3), {}), ((1,), {}), ((), {"y": 1}), ((1, 2), {})]
    before = [outcome(*c) for c in calls + errors] + [outcome(*c, cls=Two) for c in two]
    assert compiled == []
    for _ in range(module.COMPILE_AFTER):
        Late(0)
    for _ in range(module.COMPILE_AFTER):
        Two(0, 0)
    assert compiled == ["Late", "Two"]
    assert [outcome(*c) for c in calls + errors] + [outcome(*c, cls=Two) for c in two] == before
