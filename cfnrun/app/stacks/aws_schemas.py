"""The resource schemas of AWS::* types, as cfn-lint ships them (``model/aws_type_schemas.py`` reads them).

Local stacks read three facts from them: which properties
are createOnly (a change replaces the resource, as in a change set's ``Replacement``), which
are writeOnly (never shown in events), and which are integers, numbers or booleans (a parameter's
string for one is sent to the endpoint as that type). Only the JSON files are read; cfn-lint itself is not
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

    def attribute_type(self, type_name: str, attribute: str) -> Optional[str]:
        """The type the schema gives the property ``attribute`` (``A`` or ``A.B``) reads; None when it does not say."""
        schema = self.schema(type_name)
        return schema.property_type(attribute.split(".")) if schema is not None else None

    def mask_write_only(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        schema = self.schema(type_name)
        return (schema.mask_write_only(properties) or {}) if schema is not None else properties

    def typed(self, type_name: str, properties: Dict[str, Any]) -> Dict[str, Any]:
        """``properties`` with each string the schema types integer, number or boolean as that type ("600" becomes 600,
        "true" True), as the service takes a parameter's string for such a property; the endpoint's CloudFormation (moto's)
        may compare the value with numbers. A string that is no such value is left as it is (the endpoint refuses it)."""
        schema = self.schema(type_name)
        if schema is None:
            return properties
        definitions = schema.document.get("definitions") or {}
        typed = _typed(properties, {"type": "object", "properties": schema.document.get("properties") or {}}, definitions, 0)
        return typed if isinstance(typed, dict) else properties


def _typed(value: Any, declared: Any, definitions: Dict[str, Any], depth: int) -> Any:
    if not isinstance(declared, dict) or depth > 20:
        return value
    reference = declared.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/definitions/"):
        return _typed(value, definitions.get(reference[len("#/definitions/"):]), definitions, depth + 1)
    if isinstance(value, dict):
        inner = declared.get("properties")
        if not isinstance(inner, dict):
            return value
        return {key: _typed(item, inner.get(key), definitions, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item, declared.get("items"), definitions, depth + 1) for item in value]
    if isinstance(value, str):
        return _scalar(value, declared.get("type"))
    return value


def _scalar(value: str, declared_type: Any) -> Any:
    if declared_type == "integer" and value.strip().lstrip("-").isdigit():
        return int(value)
    if declared_type == "number":
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
    if declared_type == "boolean" and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value
