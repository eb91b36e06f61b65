"""A generated template's resource from a READ model: readOnly properties left out, writeOnly ones made parameters or warned of."""
from __future__ import annotations

from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.generated_resources import generated_logical_id, resource_template

SCHEMA = ResourceSchema({
    "typeName": "Org::Service::Thing",
    "definitions": {"Code": {"type": "object", "properties": {"Key": {"type": "string", "description": "the key"}}, "required": ["Key"]}},
    "properties": {
        "Id": {"type": "string"}, "Name": {"type": "string"}, "Password": {"type": "string", "description": "a secret"},
        "Size": {"type": "integer"}, "Body": {"type": ["object", "string"]}, "Keys": {"type": "array", "items": {"type": "string"}},
        "Code": {"$ref": "#/definitions/Code"}, "Hint": {"type": "string"},
    },
    "required": ["Name", "Password", "Size", "Body", "Keys", "Code"],
    "readOnlyProperties": ["/properties/Id"],
    "writeOnlyProperties": ["/properties/Password", "/properties/Size", "/properties/Body", "/properties/Keys", "/properties/Code/Key",
                            "/properties/Hint"],
    "primaryIdentifier": ["/properties/Id"],
})


def test_required_scalar_write_only_properties_become_parameters_and_the_rest_are_warned_of() -> None:
    made = resource_template(SCHEMA, "Thing", {"Id": "t-1", "Name": "n", "Password": "leaked by a bad READ", "Code": {}})
    assert made.properties == {
        "Name": "n", "Password": {"Ref": "ThingPassword"}, "Size": {"Ref": "ThingSize"}, "Body": {"Ref": "ThingBody"},
        "Code": {"Key": {"Ref": "ThingCodeKey"}},
    }
    assert made.parameters == {
        "ThingPassword": {"Type": "String", "NoEcho": True, "Description": "a secret"},
        "ThingSize": {"Type": "Number", "NoEcho": True},
        "ThingBody": {"Type": "String", "NoEcho": True},
        "ThingCodeKey": {"Type": "String", "NoEcho": True, "Description": "the key"},
    }
    assert made.warnings == [
        {"Type": "MUTUALLY_EXCLUSIVE_TYPES", "Properties": [{"PropertyPath": "Body", "Required": True}]},
        {"Type": "UNSUPPORTED_PROPERTIES", "Properties": [{"PropertyPath": "Keys", "Required": True}, {"PropertyPath": "Hint", "Required": False}]},
    ]


def test_a_logical_id_is_made_from_the_type_and_identifier_and_kept_unique() -> None:
    assert generated_logical_id("Org::Service::Thing", {"Id": "t-1"}, set()) == "ServiceThing00t1"
    assert generated_logical_id("Org::Service::Thing", {"Id": "t-1"}, {"ServiceThing00t1"}) == "ServiceThing00t12"
