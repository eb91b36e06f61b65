"""What the JSON encoding hides: the writeOnly values of the models an event carries."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol

from cfnrun.model.schema import ResourceSchema

Model = Dict[str, Any]


class Masking(Protocol):
    """What ``encode`` masks models with: ``--json`` hands a WriteOnlyMasking, the history its Masker
    (which, writing the records to disk, also replaces the secrets it learned wherever they appear)."""

    def model(self, model: Optional[Model]) -> Optional[Model]: ...

    def models(self, models: Optional[List[Model]]) -> Optional[List[Model]]: ...


class WriteOnlyMasking:
    """Masks writeOnly properties where the schema puts them: nothing a handler must not echo reaches the output."""

    def __init__(self, schema: ResourceSchema) -> None:
        self.schema = schema

    def model(self, model: Optional[Model]) -> Optional[Model]:
        return self.schema.mask_write_only(model) if isinstance(model, dict) else model

    def models(self, models: Optional[List[Model]]) -> Optional[List[Model]]:
        return None if models is None else [m for m in (self.model(m) for m in models) if m is not None]
