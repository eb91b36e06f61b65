"""The resource schemas of AWS::* types, as cfn-lint ships them (``model/aws_type_schemas.py`` reads them).

Local stacks read two facts from them: which properties
are createOnly (a change replaces the resource, as in a change set's ``Replacement``) and which
are writeOnly (never shown in events). Only the JSON files are read; cfn-lint itself is not
imported for this. A type the data does not know is treated as the service treats the unknown:
a change may replace it (Conditional), nothing is masked.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from cfnrun.model.aws_type_schemas import AwsTypeSchemas
from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.provisioning import Replacement


class AwsSchemas(AwsTypeSchemas):
    def __init__(self, region: str) -> None:
        super().__init__(region)
        self._schemas: Dict[str, Optional[ResourceSchema]] = {}

    def schema(self, type_name: str) -> Optional[ResourceSchema]:
        if type_name not in self._schemas:
            document = self.document(type_name)
            self._schemas[type_name] = ResourceSchema(document) if document is not None else None
        return self._schemas[type_name]

    def replacement(self, type_name: str, property_path: str) -> Replacement:
        schema = self.schema(type_name)
        if schema is None:
            return Replacement.CONDITIONALLY
        pointer = f"/properties/{property_path}"
        if any(p == pointer or p.startswith(pointer + "/") for p in schema.create_only_properties):
            return Replacement.ALWAYS
        return Replacement.NEVER

    def lacks_attribute(self, type_name: str, attribute: str) -> bool:
        """Is ``attribute`` (``A`` or ``A.B``) surely no Fn::GetAtt attribute of the type: its schema has no property
        ``A``? (Which properties the service lets Fn::GetAtt read is left to the endpoint.)"""
        schema = self.schema(type_name)
        if schema is None:
            return False
        properties = schema.document.get("properties")
        return isinstance(properties, dict) and attribute.split(".", 1)[0] not in properties

    def mask_write_only(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        schema = self.schema(type_name)
        return (schema.mask_write_only(properties) or {}) if schema is not None else properties
