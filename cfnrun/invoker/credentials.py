"""The caller credentials a handler gets: the developer's local ones, or placeholders.

CloudFormation always sends callerCredentials, so a handler always gets a session:
the local credentials when there are any, placeholder keys otherwise. When the
handler's AWS calls go to another endpoint (--aws-endpoint, --moto), local
credentials stay home unless a --profile names them. Credentials are passed to the
handler only, never printed or written anywhere.

Keys in the environment are read without botocore (~0.1-0.2 s to import, on a one-shot
invoke's critical path): they are what botocore's chain would return first. So are a plain
profile's keys in ~/.aws/credentials, and a machine with nothing configured (``aws_files.py``).
"""
from __future__ import annotations

import os
from typing import Optional

from cfnrun.model.protocol import Credentials
from cfnrun.invoker.aws_files import nothing_to_find, plain_profile
from cfnrun.invoker.placeholder_keys import ACCESS_KEY_ID, SECRET_ACCESS_KEY, SESSION_TOKEN
from cfnrun.invoker.region import no_such_profile

PLACEHOLDER = Credentials(accessKeyId=ACCESS_KEY_ID, secretAccessKey=SECRET_ACCESS_KEY, sessionToken=SESSION_TOKEN)


NO_LOCAL_CREDENTIALS = (
    "no AWS credentials found locally: the handler gets placeholder caller credentials, which AWS refuses; "
    "--moto or --aws-endpoint URL send its AWS calls to a local stand-in"
)


def caller_credentials(
    profile: Optional[str] = None, use_local: bool = True, aws_endpoint: Optional[str] = None
) -> "tuple[Credentials, Optional[str]]":
    """The credentials to send, and a note for the developer when they are placeholders by necessity."""
    if not use_local or (aws_endpoint and profile is None):
        return PLACEHOLDER, None
    found = local_credentials(profile)
    if found is None:
        return PLACEHOLDER, None if aws_endpoint else NO_LOCAL_CREDENTIALS
    return found, None


def local_credentials(profile: Optional[str] = None) -> Optional[Credentials]:
    """Resolve the boto3 credential chain, minus the slow instance-metadata lookups."""
    found = environment_credentials(profile)
    if found is not None:
        return found
    if nothing_to_find(profile):
        return None
    plain = plain_profile(profile)
    if plain is not None and plain.access_key is not None:
        return Credentials(accessKeyId=plain.access_key, secretAccessKey=plain.secret_key, sessionToken=plain.token)
    import botocore.exceptions
    import botocore.session

    try:
        session = botocore.session.Session(profile=profile)
        resolver = session.get_component("credential_provider")
        for slow in ("iam-role", "container-role"):
            try:
                resolver.remove(slow)
            except (ValueError, KeyError):
                pass
        found = session.get_credentials()
        if found is None:
            return None
        frozen = found.get_frozen_credentials()
    except botocore.exceptions.ProfileNotFound:
        raise no_such_profile(profile) from None
    except botocore.exceptions.BotoCoreError:
        return None
    if not frozen.access_key or not frozen.secret_key:
        return None
    return Credentials(
        accessKeyId=frozen.access_key,
        secretAccessKey=frozen.secret_key,
        sessionToken=frozen.token or "",
    )


def environment_credentials(profile: Optional[str] = None) -> Optional[Credentials]:
    """The keys in the environment, as botocore's chain finds them first; None where only botocore can tell.

    botocore's first provider reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with the token
    from AWS_SECURITY_TOKEN, else AWS_SESSION_TOKEN; a profile passed explicitly (--profile) sets
    it aside, and AWS_CREDENTIAL_EXPIRATION makes the keys refreshable: those cases, and keys
    without their secret, are left to botocore.
    """
    if profile is not None or os.environ.get("AWS_CREDENTIAL_EXPIRATION"):
        return None
    access_key, secret_key = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not access_key or not secret_key:
        return None
    token = os.environ.get("AWS_SECURITY_TOKEN") or os.environ.get("AWS_SESSION_TOKEN") or ""
    return Credentials(accessKeyId=access_key, secretAccessKey=secret_key, sessionToken=token)
