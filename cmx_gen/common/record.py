"""The base of every fact cmx-gen reports: one pydantic type per fact, made by the stage that knows it
and held as is by the report (program/report.py), so a fact is typed once. `to_dict()` is the
fact as report.json holds it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class Record(BaseModel):
    """Frozen; keys are only ever added (docs/report.md), so an older cmx-gen reads a newer report's
    parts with their extra keys kept. Every field counts as given, defaults too: a part is written
    whole, as a dataclass's asdict would (only the report's own top level leaves out what a program
    does not have, report.Report)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _all_given(self) -> "Record":
        self.__pydantic_fields_set__.update(type(self).model_fields)
        return self

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
