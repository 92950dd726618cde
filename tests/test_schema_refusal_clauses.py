"""Every pydantic failure kind reads as its own clause (mbank/schema_refusal.py)."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mbank.schema_refusal import schema_refusal


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = "q"
    short: str = Field("x", max_length=3)
    long: str = Field("xx", min_length=2)
    items: list[int] = Field(default_factory=lambda: [1], min_length=1, max_length=2)
    at_least: int = Field(1, ge=1)
    at_most: int = Field(1, le=5)
    above: int = Field(1, gt=0)
    below: int = Field(1, lt=9)
    mode: Literal["a", "b"] = "a"
    flag: bool = False


CASES = [
    ({"short": "abcd"}, "`short` is too long (at most 3 characters)"),
    ({"long": "a"}, "`long` is too short (at least 2 characters)"),
    ({"items": [1, 2, 3]}, "`items` has too many items (at most 2)"),
    ({"items": []}, "`items` has too few items (at least 1)"),
    ({"at_least": 0}, "`at_least` must be at least 1"),
    ({"at_most": 6}, "`at_most` must be at most 5"),
    ({"above": 0}, "`above` must be more than 0"),
    ({"below": 9}, "`below` must be less than 9"),
    ({"mode": "c"}, "`mode` must be one of 'a' or 'b'"),
    ({"flag": "perhaps"}, "`flag` must be true or false"),
    ({"at_least": "many"}, "`at_least` must be an integer"),
    ({"nope": 1}, "`nope` is not an argument of this tool; leave it out"),
]


@pytest.mark.parametrize(("arguments", "clause"), CASES)
def test_each_failure_kind_has_its_clause(arguments: dict[str, object], clause: str) -> None:
    with pytest.raises(ValidationError) as failure:
        _Arguments.model_validate(arguments)
    assert schema_refusal("bank_x", failure.value, "invalid-arguments") == (
        f"invalid-arguments: {clause} (fix it and call bank_x again, as its input schema "
        "describes)."
    )


def test_a_missing_argument_is_required() -> None:
    class Required(BaseModel):
        question: str

    with pytest.raises(ValidationError) as failure:
        Required.model_validate({})
    assert schema_refusal("bank_route", failure.value, "invalid-arguments") == (
        "invalid-arguments: `question` is required (fix it and call bank_route again, as its "
        "input schema describes)."
    )
