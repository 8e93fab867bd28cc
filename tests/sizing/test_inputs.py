"""The one check of a value against its input's declaration (``sizing.inputs``).

Limits quoted are those declared in ``sizing/workload.py`` (users 1 to
``MAX_USERS`` = 1,000,000; the active share above 0 and at most 1; the KV dtypes of
``KV_DTYPES``; a GPU slug of at most 64 characters) and ``sizing/traffic/profile.py``
(the TPOT target above 0 and at most ``MAX_TARGET_MS`` = 600,000 ms).
"""

from __future__ import annotations

import dataclasses

import pytest

from sizing.errors import SizingError
from sizing.inputs import QUOTED_CHARS, check_inputs, declared_inputs, input_field
from sizing.workload import INPUTS, SEED_WORKLOAD


def refusal(name: str, value: object) -> SizingError:
    with pytest.raises(SizingError) as caught:
        INPUTS[name].check(value)
    assert caught.value.field == name
    return caught.value


@pytest.mark.parametrize(
    ("name", "value", "code", "message"),
    [
        ("users", 0, "between", "the number of users must be between 1 and 1,000,000, got 0"),
        ("users", 10**400, "between", "between 1 and 1,000,000, got about 1e+400"),
        ("users", True, "whole_number", "the number of users must be a whole number, got True"),
        ("users", 2.5, "whole_number", "must be a whole number, got 2.5"),
        ("users", None, "required", "the number of users is required"),
        ("active_share", 0.0, "above_at_most", "must be above 0 and at most 1, got 0"),
        ("active_share", float("nan"), "above_at_most", "at most 1, got nan"),
        ("tpot_ms", float("inf"), "above_at_most", "at most 600,000, got inf"),
        ("kv_dtype", "int4", "one_of", "one of auto, bf16, fp16, fp32, fp8, got 'int4'"),
        ("expert_parallel", "yes", "switch", "expert parallelism must be true or false"),
        ("gpu", 7, "text", "the GPU must be text, got 7"),
    ],
)
def test_a_value_its_declaration_refuses_is_named_and_worded(
    name: str, value: object, code: str, message: str
) -> None:
    error = refusal(name, value)
    assert error.code == code
    assert message in error.message
    assert error.template and dict(error.values)["input"] == INPUTS[name].label


def test_values_inside_the_limits_pass() -> None:
    for name, value in [("users", 1), ("users", 1_000_000), ("active_share", 1), ("tpot_ms", 5)]:
        INPUTS[name].check(value)
    INPUTS["tensor_parallel_size"].check(None)  # optional: the plan chooses
    check_inputs(SEED_WORKLOAD, INPUTS)


def test_a_long_text_is_quoted_cut() -> None:
    error = refusal("gpu", "x" * 100_000)
    assert error.code == "length_at_most"
    assert len(str(dict(error.values)["got"])) == QUOTED_CHARS


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("users", " 500 ", 500),
        ("active_share", "0.3", 0.3),
        ("tensor_parallel_size", "", None),
        ("expert_parallel", "on", True),
        ("expert_parallel", "false", False),
        ("kv_dtype", "fp8", "fp8"),
    ],
)
def test_text_is_read_as_the_inputs_type(name: str, text: str, value: object) -> None:
    assert INPUTS[name].parse(text) == value


def test_text_that_is_not_of_the_inputs_type_is_refused() -> None:
    with pytest.raises(SizingError) as caught:
        INPUTS["users"].parse("many")
    assert caught.value.code == "whole_number"
    assert caught.value.message == "the number of users must be a whole number, got 'many'"


def test_a_field_not_declared_as_an_input_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Loose:
        count: int = dataclasses.field(default=1)

    @dataclasses.dataclass(frozen=True)
    class Declared:
        count: int = input_field(1, help="a count", label="the count", min=1, max=3)

    with pytest.raises(TypeError):
        declared_inputs(Loose)
    (declared,) = declared_inputs(Declared).values()
    assert (declared.kind, declared.optional, declared.default) == (int, False, 1)
