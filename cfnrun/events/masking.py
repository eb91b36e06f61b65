"""What the JSON encoding hides: the writeOnly values of the models an event carries."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Protocol

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


class LiveMask:
    """What the live output of the operation running now hides (``cfnrun invoke --watch`` runs one after another, each
    with its own request): the renderers pass each line through it; ``use`` sets it for each operation (None: nothing
    to hide, the line as it is)."""

    def __init__(self) -> None:
        self.text: Optional[Callable[[str], str]] = None

    def use(self, text: Optional[Callable[[str], str]]) -> None:
        self.text = text

    def __call__(self, line: str) -> str:
        return line if self.text is None else self.text(line)
