"""The compact sending log reads back exactly what a plain list of Sending would hold."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hydrangea.lifecycle._sendings import SendingLog
from hydrangea.lifecycle.history import Sending

_ops = st.lists(
    st.one_of(
        st.tuples(st.just("send"), st.sampled_from(["a", "b", "c"]), st.integers(0, 3)),
        st.tuples(st.just("cut_past"), st.just(""), st.integers(0, 40)),
        st.tuples(st.just("withdraw"), st.just(""), st.just(0)),
    ),
    max_size=60,
)


@given(_ops)
def test_the_log_matches_a_list_of_sendings(ops: list[tuple[str, str, int]]) -> None:
    log, oracle = SendingLog(), list[Sending]()
    episode = at = 0
    for op, key, n in ops:
        if op == "send":  # n items after a gap of n % 2 items (a turn between sendings)
            at += n % 2
            sending = Sending(key, episode, at, at + n)
            log.append(sending)
            oracle.append(sending)
            episode, at = episode + 1, at + n
        elif op == "cut_past":
            log.cut_past(n)
            while oracle and oracle[-1].end > n:
                oracle.pop()
            at = min(at, n)
        else:  # the run of sendings that ends the history, with no item between them
            count, start = log.run_start(at)
            # the longest suffix whose sendings follow one another and end at the history's end
            k = min(
                k for k in range(len(oracle) + 1)
                if all(x.end == y.start for x, y in zip(oracle[k:], oracle[k + 1 :], strict=False))
                and (k == len(oracle) or oracle[-1].end == at)
            )
            assert (count, start) == (k, oracle[k].start if k < len(oracle) else at)
            log.cut(count)
            del oracle[count:]
            at = start
        assert list(log) == oracle
        assert len(log) == len(oracle)
        assert log.end() == (oracle[-1].end if oracle else 0)
        if oracle:
            assert log[-1] == oracle[-1] and log[0] == oracle[0]
    assert list(SendingLog(oracle)) == oracle
