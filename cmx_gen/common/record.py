"""The base of every fact cmx-gen reports: one pydantic type per fact, made by the stage that knows it
and held as is by the report (program/report.py), so a fact is typed once. `to_dict()` is the
fact as report.json holds it."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, model_validator


class SparseRecord(BaseModel):
    """Frozen; keys are only ever added (docs/report.md), so an older cmx-gen reads a newer report's
    parts with their extra keys kept. `to_dict()` writes the fields that were given, in the order
    they are declared: a part a program does not have is left out, not written as its default."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def without(self, *fields: str) -> Self:
        """A copy with `fields` back to their defaults and left out of to_dict()."""
        defaults = {name: type(self).model_fields[name].get_default(call_default_factory=True) for name in fields}
        copy = self.model_copy(update=defaults)
        object.__setattr__(copy, "__pydantic_fields_set__", copy.__pydantic_fields_set__ - set(fields))
        return copy


class Record(SparseRecord):
    """A fact written whole: every field, defaults too (as a dataclass's asdict would)."""

    @model_validator(mode="after")
    def _all_given(self) -> Self:
        self.__pydantic_fields_set__.update(type(self).model_fields)
        return self


class ReportPart(Record):
    """A lowering step's record that report.json holds as it is, under `key` (a field of
    program/report.Report of this type): a step that reports something makes one of these, and
    nothing between the step and the report has to pass it on."""

    key: ClassVar[str]
