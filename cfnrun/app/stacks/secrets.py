"""AWS::SecretsManager::Secret made through the AWS endpoint's Secrets Manager API rather than its CloudFormation.

moto's CloudFormation (5.2) completes a stack that declares a secret without making it. The type's
handler on AWS calls CreateSecret; so does cfnrun, on the endpoint the handlers and ``{{resolve:
secretsmanager:...}}`` read. A ``GenerateSecretString`` value comes from the endpoint's
GetRandomPassword with the property's options; with ``SecretStringTemplate`` and ``GenerateStringKey``,
the password is put under that key of the template's JSON object, as the type's reference describes.
A secret declared without ``Name`` gets ``LogicalId-SUFFIX`` (inferred from names the service made).
The physical id, the Ref and ``Id`` are the secret's ARN.

An update changes what changed: ``Description`` and ``KmsKeyId`` with UpdateSecret, the value with
PutSecretValue (a new ``SecretString``, or a new password for a changed ``GenerateSecretString``),
``Tags`` with TagResource and UntagResource; a new ``Name`` (createOnly) replaces the secret. A delete
is DeleteSecret without a recovery window (inferred: the stack's delete leaves no secret to restore).
The value is sent to the endpoint only: it is in no record, event or console line (both value
properties are writeOnly in the type's schema, and the record keeps the ARN alone).
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from cfnrun.stacks.provisioning import Provisioned, ProvisioningFailed, ResourceWork, property_problem
from cfnrun.app.stacks.direct_types import DIRECT_KEY, EndpointService
from cfnrun.app.stacks.generated_names import MIXED, generated_for

SECRET = "AWS::SecretsManager::Secret"
GONE = ("ResourceNotFoundException",)
NAME_LENGTH = 512
# GenerateSecretString's options that are GetRandomPassword's parameters, under the same names
PASSWORD_OPTIONS = ("PasswordLength", "ExcludeCharacters", "ExcludeNumbers", "ExcludePunctuation", "ExcludeUppercase",
                    "ExcludeLowercase", "IncludeSpace", "RequireEachIncludedType")


class Secrets:
    """Secrets on the endpoint's Secrets Manager: how ``AwsTypes`` makes AWS::SecretsManager::Secret."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.secrets = EndpointService("secretsmanager", "Secrets Manager", endpoint_url, region)

    def takes(self, work: ResourceWork) -> bool:
        return True  # made here from the start: moto's CloudFormation does not make the type

    async def put(self, work: ResourceWork) -> Provisioned:
        properties, arn = work.properties, (work.model or {}).get("Arn")
        if properties.get("SecretString") is not None and properties.get("GenerateSecretString") is not None:
            raise ProvisioningFailed(property_problem(
                work.logical_id, "#: only one of SecretString and GenerateSecretString may be specified"))  # inferred wording
        settings = {key: properties[key] for key in ("Description", "KmsKeyId") if properties.get(key) is not None}
        if not isinstance(arn, str):
            name = properties.get("Name") or generated_for(work, NAME_LENGTH, MIXED, prefix="")
            value = await self._value(work)
            made = await self.secrets.ask("create_secret", Name=str(name), **settings, **_tags(properties.get("Tags")),
                                          **({"SecretString": value} if value is not None else {}))
            arn = str(made["ARN"])
        else:
            before = work.previous_properties or {}
            if any(before.get(key) != properties.get(key) for key in ("Description", "KmsKeyId")) and settings:
                await self.secrets.ask("update_secret", SecretId=arn, **settings)
            if any(before.get(key) != properties.get(key) for key in ("SecretString", "GenerateSecretString")):
                value = await self._value(work)
                if value is not None:
                    await self.secrets.ask("put_secret_value", SecretId=arn, SecretString=value)
            await self._retagged(arn, before.get("Tags"), properties.get("Tags"))
        attributes = {"Id": arn} if "Id" in work.attributes_wanted else {}
        return Provisioned(arn, arn, attributes, {DIRECT_KEY: SECRET, "Arn": arn})

    async def _value(self, work: ResourceWork) -> Optional[str]:
        """The secret's value: its SecretString, or one GenerateSecretString makes; None when the template gives neither."""
        given = work.properties.get("SecretString")
        if given is not None:
            return str(given)
        generate = work.properties.get("GenerateSecretString")
        if not isinstance(generate, dict):
            return None
        options = {key: generate[key] for key in PASSWORD_OPTIONS if generate.get(key) is not None}
        password = str((await self.secrets.ask("get_random_password", **options))["RandomPassword"])
        template, key = generate.get("SecretStringTemplate"), generate.get("GenerateStringKey")
        if template is None and key is None:
            return password
        try:
            document = json.loads(str(template))
        except ValueError:
            document = None
        if not isinstance(document, dict) or not isinstance(key, str):
            raise ProvisioningFailed(property_problem(
                work.logical_id, "#/GenerateSecretString: SecretStringTemplate must be a JSON object and GenerateStringKey a string, "
                "given together"))  # inferred wording
        return json.dumps({**document, key: password})

    async def _retagged(self, arn: str, before: Any, after: Any) -> None:
        old, new = _tag_map(before), _tag_map(after)
        gone = [key for key in old if key not in new]
        if gone:
            await self.secrets.ask("untag_resource", SecretId=arn, TagKeys=gone)
        changed = {key: value for key, value in new.items() if old.get(key) != value}
        if changed:
            await self.secrets.ask("tag_resource", SecretId=arn, Tags=[{"Key": k, "Value": v} for k, v in changed.items()])

    async def delete(self, work: ResourceWork) -> None:
        arn = (work.model or {}).get("Arn") or work.physical_id
        if not work.retain and isinstance(arn, str):
            await self.secrets.unless_gone(GONE, "delete_secret", SecretId=arn, ForceDeleteWithoutRecovery=True)

    async def left(self, model: Dict[str, Any]) -> Optional[str]:
        arn = model.get("Arn")
        if not isinstance(arn, str):
            return "cfnrun has no record of the secret's ARN"
        return await self.secrets.still_there(GONE, f"the secret {arn}", "describe_secret", SecretId=arn)


def _tag_map(tags: Any) -> Dict[str, str]:
    listed: List[Any] = tags if isinstance(tags, list) else []
    return {str(t["Key"]): str(t.get("Value", "")) for t in listed if isinstance(t, dict) and "Key" in t}


def _tags(tags: Any) -> Dict[str, Any]:
    found = _tag_map(tags)
    return {"Tags": [{"Key": k, "Value": v} for k, v in found.items()]} if found else {}
