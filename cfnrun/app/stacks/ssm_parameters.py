"""Systems Manager parameters a stack's ``AWS::SSM::Parameter::Value<...>`` parameters name, read on the AWS endpoint.

The service reads such a parameter when each CreateStack, UpdateStack or CreateChangeSet
arrives (so an update reads it again) and refuses the call, as a ValidationError, when the
parameter is not there: ``Unable to fetch parameters [name] from parameter store for this
account.`` (the words the service answers with, as users have reported them). The value read is
what ``Ref`` gives and DescribeStacks shows as the parameter's ``ResolvedValue``.
"""
from __future__ import annotations

from typing import Any, Optional

from cfnrun.stacks.template.errors import TemplateError

NOT_FETCHED = "Unable to fetch parameters [{name}] from parameter store for this account."


class SsmParameters:
    """Reads parameters from the endpoint's Systems Manager, with the credentials the handlers' endpoint takes."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.endpoint_url = endpoint_url
        self.region = region
        self._client: Optional[Any] = None

    def _ssm(self) -> Any:
        if self._client is None:
            import boto3  # what the endpoint speaks; imported once a template names a parameter

            self._client = boto3.client(
                "ssm", endpoint_url=self.endpoint_url, region_name=self.region,
                aws_access_key_id="testing", aws_secret_access_key="testing",
            )
        return self._client

    def value(self, name: str) -> str:
        """The parameter's current value (a StringList's items joined by commas, as SSM keeps them); TemplateError when absent."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            answered = self._ssm().get_parameter(Name=name)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("ParameterNotFound", "ValidationException"):
                raise TemplateError(NOT_FETCHED.format(name=name)) from None
            raise TemplateError(f"{NOT_FETCHED.format(name=name)} (the AWS endpoint answered: {error})") from None
        except BotoCoreError as error:
            raise TemplateError(f"{NOT_FETCHED.format(name=name)} (the AWS endpoint {self.endpoint_url} did not answer: {error})") from None
        return str(answered["Parameter"]["Value"])
