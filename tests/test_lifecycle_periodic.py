"""``periodic``: the shortcut the session takes for sticky and cyclic components, checked
against the step-by-step oracle of each lifecycle."""

from __future__ import annotations

from itertools import islice

from hypothesis import given

from hydrangea.lifecycle.visibility import periodic
from tests.support.lifecycle_oracle import Spec, build, oracle_phases, specs

HORIZON = 200


@given(specs())
def test_periodic_components_show_exactly_where_the_oracle_shows_them(spec: Spec) -> None:
    component = build(spec, "x")
    timeline = list(islice(oracle_phases(spec), HORIZON))
    cycle = periodic(component)
    if cycle is None:
        # only components that are not (sticky or cyclic and sometimes hidden)
        assert spec.kind != "cyclic" or spec.ttl >= spec.cadence
        return
    period, shown = cycle
    assert spec.kind == "cyclic"  # the oracle's cyclic kind covers sticky (ttl=cadence=1)
    phase = (component.phases[0].placement.value, component.phases[0].stage)
    assert timeline == [phase if k % period < shown else None for k in range(HORIZON)]
    assert None in timeline  # hidden at some episodes: a shortcut only where one is needed
