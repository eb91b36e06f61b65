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


def test_the_first_of_mutually_exclusive_write_only_sets_becomes_parameters_named_one_of() -> None:
    schema = ResourceSchema({
        "typeName": "Org::Service::Function",
        "definitions": {"Code": {
            "type": "object",
            "properties": {"Bucket": {"type": "string"}, "Key": {"type": "string"}, "ZipFile": {"type": "string"}},
            "oneOf": [{"required": ["Bucket", "Key"]}, {"required": ["ZipFile"]}],
        }},
        "properties": {"Arn": {"type": "string"}, "Code": {"$ref": "#/definitions/Code"}},
        "required": ["Code"],
        "readOnlyProperties": ["/properties/Arn"],
        "writeOnlyProperties": ["/properties/Code/Bucket", "/properties/Code/Key", "/properties/Code/ZipFile"],
        "primaryIdentifier": ["/properties/Arn"],
    })
    made = resource_template(schema, "Fn", {"Arn": "a", "Code": {}})
    assert made.properties == {"Code": {"Bucket": {"Ref": "FnCodeBucketOneOf"}, "Key": {"Ref": "FnCodeKeyOneOf"}}}
    assert made.parameters["FnCodeBucketOneOf"] == {
        "Type": "String", "NoEcho": True, "Description": "Code/Bucket (one of mutually exclusive properties: the other set may replace it)"
    }
    assert made.warnings == [
        {"Type": "MUTUALLY_EXCLUSIVE_PROPERTIES", "Properties": [{"PropertyPath": "Code/Bucket", "Required": True},
                                                                 {"PropertyPath": "Code/Key", "Required": True}]},
        {"Type": "UNSUPPORTED_PROPERTIES", "Properties": [{"PropertyPath": "Code/ZipFile", "Required": False}]},
    ]
