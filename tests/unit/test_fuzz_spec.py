"""Fuzzing the spec loader: any input gives a valid spec or a SpecError naming the file — never a
traceback, never a partial result."""

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.spec import LoadedSpec, SpecError, load_spec
from tests.support.specs import demo_spec_dict

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def check(path: Path) -> None:
    try:
        loaded = load_spec(path)
    except SpecError as error:
        assert str(path) in str(error)
        return
    assert isinstance(loaded, LoadedSpec) and loaded.spec.candidates


@FUZZ
@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes(tmp_path, raw):
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(raw)
    check(path)


def _paths(data, prefix=()):
    if isinstance(data, dict):
        for key, value in data.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield prefix + (index,)
            yield from _paths(value, prefix + (index,))


DEMO_PATHS = list(_paths(demo_spec_dict()))


@FUZZ
@given(where=st.sampled_from(DEMO_PATHS), value=values)
def test_one_field_of_the_demo_spec_replaced_by_anything(tmp_path, where, value):
    data = demo_spec_dict()
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path = tmp_path / "mutated.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    check(path)
