"""A request's top-level history list is recycled only when nobody can see it (issue 16).

The oracle of a request is the gateway's builder run from scratch on the whole item list
(``tests.test_request_cache.oracle``); the oracle of a list somebody still holds is a deep copy
the test took when it got the list (after its own changes). After every step of a random session,
whatever the caller does with each request (keeps it, changes it and keeps it, changes it and
lets it go, lets it go), the next request equals a build from scratch and every list still held
is exactly what its holder last saw.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.context import Context
from hydrangea.gateway import GatewayType
from hydrangea.lifecycle import Component, Lifecycle
from hydrangea.message import Message, Role
from tests.test_request_cache import ALL, apply, dumped, oracle, overlay, step

INJECTED = {"role": "user", "content": "injected by the caller"}

MUTATIONS = [
    "append", "extend", "iadd", "insert", "setitem", "setslice", "delitem", "pop", "remove",
    "clear", "sort", "reverse", "imul",
]


def mutate(listed: list[Any], how: str) -> None:
    """Change ``listed`` the way a caller might (every mutating method of ``list``)."""
    if not listed:  # (an empty request: the methods that need an entry cannot run)
        listed.append(INJECTED)
        return
    match how:
        case "append":
            listed.append(INJECTED)
        case "extend":
            listed.extend([INJECTED])
        case "iadd":
            listed += [INJECTED]
        case "insert":
            listed.insert(0, INJECTED)
        case "setitem":
            listed[0] = INJECTED
        case "setslice":
            listed[:1] = [INJECTED]
        case "delitem":
            del listed[0]
        case "pop":
            listed.pop()
        case "remove":
            listed.remove(listed[0])
        case "clear":
            listed.clear()
        case "sort":
            listed.sort(key=lambda entry: 0)  # stable: same order, still a change
            listed.reverse()
        case "reverse":
            listed.reverse()
        case "imul":
            listed *= 2
        case _:
            raise AssertionError(how)


def frozen(value: object) -> str:
    """What a holder sees in a list, at this moment."""
    return json.dumps(value, sort_keys=True, default=repr)


handling = st.one_of(
    st.just(("drop", "")),
    st.just(("keep", "")),
    st.tuples(st.just("change and drop"), st.sampled_from(MUTATIONS)),
    st.tuples(st.just("change and keep"), st.sampled_from(MUTATIONS)),
)


@given(
    gateway=st.sampled_from(ALL),
    steps=st.lists(step, max_size=20),
    handled=st.lists(st.tuples(handling, handling), min_size=20, max_size=20),
    cuts=st.lists(st.integers(0, 25), min_size=20, max_size=20),
)
def test_recycled_lists_never_change_under_a_holder_nor_leak_into_a_request(
    gateway: GatewayType,
    steps: list[tuple[str, Any]],
    handled: list[tuple[tuple[str, str], tuple[str, str]]],
    cuts: list[int],
) -> None:
    context = Context(gateway)
    runs = overlay(gateway)  # the same objects in every request, as a lifecycle's components
    key = context.adapter.history_key
    held: list[tuple[list[Any], str]] = []
    for (kind, value), (whole, lifecycle_like), cut in zip(steps, handled, cuts, strict=False):
        context = apply(context, kind, value)
        stable = min(cut, len(context))
        for lifecycle_request, (what, how) in ((True, lifecycle_like), (False, whole)):
            # built one at a time: nothing else holds the previous list while this one is built
            if lifecycle_request:
                built = context.build_incremental(stable, runs, overlay=[len(runs)])
                expected = oracle(context, stable, copy.deepcopy(runs))
            else:
                built = context.request()
                expected = oracle(context, len(context), [])
            assert dumped(built) == dumped(expected)
            listed = built[key]
            if what.startswith("change"):
                mutate(listed, how)
            if what.endswith("keep"):
                held.append((listed, frozen(listed)))
            del built, listed
        for listed, seen in held:
            assert frozen(listed) == seen


def _lifecycle_session(
    gateway: GatewayType, turns: int, keep: int
) -> tuple[Context, list[tuple[list[Any], str]]]:
    """A lifecycle session whose caller holds its last ``keep`` requests' lists (0: the
    current one only, as ``kwargs = request.kwargs`` in a loop does)."""
    context = Context(gateway)
    lifecycle = Lifecycle(context)
    lifecycle.add(Component("sticky note", ttl=1, cadence=1, key="sticky"))
    key = context.adapter.history_key
    kept: list[tuple[list[Any], str]] = []
    kwargs: dict[str, Any] = {}
    for turn in range(turns):
        context.emplace_message(Message(role=Role.user, content=f"question {turn}"))
        kwargs = lifecycle.render().kwargs
        if keep:
            kept = [*kept, (kwargs[key], frozen(kwargs[key]))][-keep:]
        context.emplace_message(Message(role=Role.assistant, content=f"answer {turn}"))
    return context, kept


def test_a_loop_that_holds_the_previous_request_copies_the_history_twice() -> None:
    """``kwargs = request.kwargs`` holds the previous request while the next is built: two
    lists serve the whole session, each brought up to date in place (the copies are the
    O(history) part; everything else a turn does to them costs its new items)."""
    for gateway in ALL:
        context, _ = _lifecycle_session(gateway, 40, keep=0)
        assert context._requests.copies == 2, gateway


def test_requests_a_caller_keeps_are_never_recycled() -> None:
    for gateway in ALL:
        _, kept = _lifecycle_session(gateway, 12, keep=12)
        assert len(kept) == 12
        for listed, seen in kept:
            assert frozen(listed) == seen, gateway
        assert len({id(listed) for listed, _ in kept}) == 12, gateway  # each its own list


def test_a_dropped_request_changed_by_its_caller_is_not_recycled() -> None:
    for gateway in ALL:
        for how in MUTATIONS:
            context = Context(gateway)
            for text in ("a", "b", "c"):
                context.emplace_message(Message(role=Role.user, content=text))
                context.emplace_message(Message(role=Role.assistant, content=text))
                context.request()
            mutate(context.request()[context.adapter.history_key], how)
            context.emplace_message(Message(role=Role.user, content="d"))
            assert dumped(context.request()) == dumped(oracle(context, len(context), [])), (
                gateway,
                how,
            )


def test_copies_and_pickles_of_a_request_list_are_plain_lists() -> None:
    context = Context(GatewayType.anthropic)
    for text in ("a", "b", "c"):
        context.emplace_message(Message(role=Role.user, content=text))
        context.emplace_message(Message(role=Role.assistant, content=text))
    listed = context.request()["messages"]
    assert isinstance(listed, list)
    for other in (copy.copy(listed), copy.deepcopy(listed), pickle.loads(pickle.dumps(listed))):
        assert type(other) is list
        assert other == listed


def test_a_request_list_converts_as_a_list_does() -> None:
    """Code that rebuilds a list as ``type(value)(iterable)`` (``dataclasses.asdict`` does)."""
    import dataclasses

    @dataclasses.dataclass
    class Sent:
        messages: list[Any]

    context = Context(GatewayType.openai)
    for text in ("a", "b", "c"):
        context.emplace_message(Message(role=Role.user, content=text))
        context.emplace_message(Message(role=Role.assistant, content=text))
    listed = context.request()["messages"]
    assert dataclasses.asdict(Sent(listed)) == {"messages": list(listed)}
    assert type(listed)(iter(listed)) == listed



@given(gateway=st.sampled_from(ALL), steps=st.lists(step, max_size=15),
       cuts=st.lists(st.integers(0, 20), min_size=15, max_size=15))
def test_without_reference_counts_every_request_is_a_fresh_copy_equal_to_a_fresh_build(
    gateway: GatewayType, steps: list[tuple[str, Any]], cuts: list[int]
) -> None:
    """The plain fallback (an interpreter whose reference counts cannot be trusted, as
    free-threaded CPython or PyPy): nothing is recycled, and requests are the same."""
    from hydrangea.providers import _lent

    was = _lent.set_recycling(False)
    try:
        context = Context(gateway)
        runs = overlay(gateway)
        for (kind, value), cut in zip(steps, cuts, strict=False):
            context = apply(context, kind, value)
            cache = context._requests
            before = (cache.copies, cache.incremental)
            assert dumped(context.request()) == dumped(oracle(context, len(context), []))
            stable = min(cut, len(context))
            built = context.build_incremental(stable, runs, overlay=[len(runs)])
            assert dumped(built) == dumped(oracle(context, stable, copy.deepcopy(runs)))
            # every request built on the cached prefix copied it into a new list
            assert cache.copies - before[0] == cache.incremental - before[1]
            context.request()  # what is sent (and answered next) is the history itself
    finally:
        _lent.set_recycling(was)


def test_the_plain_path_is_one_environment_variable_away() -> None:
    """``HYDRANGEA_PLAIN_LISTS=1`` at import: no list is recycled (a loop dropping each request
    copies the history every time); without it, the lists are recycled."""
    import subprocess
    import sys

    script = (
        "from hydrangea import Context, GatewayType\n"
        "from hydrangea.message import Message, Role\n"
        "from hydrangea.providers import _lent\n"
        "c = Context(GatewayType.openai)\n"
        "for n in range(6):\n"
        "    c.emplace_message(Message(role=Role.user, content=f'q{n}'))\n"
        "    c.emplace_message(Message(role=Role.assistant, content=f'a{n}'))\n"
        "    c.request()\n"
        "print(_lent.recycling(), c._requests.copies, c._requests.incremental)\n"
    )
    import os

    def run(plain: bool) -> list[str]:
        env = {k: v for k, v in os.environ.items() if k != "HYDRANGEA_PLAIN_LISTS"}
        if plain:
            env["HYDRANGEA_PLAIN_LISTS"] = "1"
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, check=True, timeout=60)
        return done.stdout.split()

    plain, recycled = run(True), run(False)
    assert plain[0] == "False" and recycled[0] == "True"
    assert int(plain[1]) == int(plain[2]) > 1  # every incremental request a fresh copy
    assert int(recycled[1]) < int(recycled[2])


def test_switching_recycling_back_on_recycles_again() -> None:
    from hydrangea.providers import _lent

    was = _lent.set_recycling(False)
    try:
        assert not _lent.recycling()
        assert _lent.set_recycling(True) is False
        assert _lent.recycling() is (_lent._counter() is not None)
    finally:
        _lent.set_recycling(was)
