"""A profile's keys and region from the AWS shared files, read with the standard library, in the plain case only.

A one-shot ``cfnrun invoke`` on a developer's machine resolves the caller credentials and the
region from ``~/.aws``; botocore, which reads them, costs it about a third of the provider's own
import. Where the profile's sections (``[profile NAME]`` or ``[default]`` in the config file,
``[NAME]`` in the credentials file) hold nothing but keys, a region and settings that do not
bear on either, botocore's chain answers with the credentials file's keys and the merged
sections' region: that is read here. Anything else — a role, SSO, a credential process, web
identity, a nested value, a file that does not parse, a profile in neither file — is None, and
botocore decides; with credentials in the environment (or where to get them), or no keys in the
credentials file, only the region is read (tests/unit/test_aws_files.py compares with botocore).

``nothing_to_find``: a machine with no AWS configuration at all (no credentials or profile in the environment, none
of the files botocore's chain reads) is told without botocore, too: its chain, less the instance and container
lookups cfnrun leaves out, finds nothing there.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional

KEYS = ("aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_security_token")
PLAIN = frozenset(KEYS + ("region", "output", "cli_pager", "retry_mode", "max_attempts"))
# Set in the environment, these bring credentials (or where to get them) that botocore weighs first.
CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_CREDENTIAL_EXPIRATION",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
)

# Where botocore's chain (less the container and instance lookups) finds credentials, other than the variables above:
# a profile named, and files its providers read when these name them or else at their default places.
PROFILE_VARIABLES = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE")
CONFIG_FILES = (  # (variable naming the file, its default places)
    ("AWS_CONFIG_FILE", (os.path.join("~", ".aws", "config"),)),  # profiles: roles, SSO, login, processes, keys
    ("AWS_SHARED_CREDENTIALS_FILE", (os.path.join("~", ".aws", "credentials"),)),
    ("BOTO_CONFIG", ("/etc/boto.cfg", os.path.join("~", ".boto"))),  # the boto2 config provider
    ("AWS_CREDENTIAL_FILE", ()),  # the original EC2 tools' file: only where the variable names it
)


def nothing_to_find(profile: Optional[str] = None) -> bool:
    """True when botocore's credential chain, less its instance and container lookups, can only find nothing."""
    if profile is not None or any(variable in os.environ for variable in CREDENTIAL_VARIABLES + PROFILE_VARIABLES):
        return False
    for variable, defaults in CONFIG_FILES:  # a file named and the default ones alike: any of them there, botocore decides
        named = os.environ.get(variable)
        if any(os.path.exists(os.path.expanduser(path)) for path in ((named,) if named else ()) + defaults):
            return False
    return True


@dataclass(frozen=True)
class PlainProfile:
    region: Optional[str]
    access_key: Optional[str] = None  # with the secret key, from the credentials file; None: botocore looks for the keys
    secret_key: str = ""
    token: str = ""


def plain_profile(profile: Optional[str] = None) -> Optional[PlainProfile]:
    """The profile's region and keys as botocore would find them; None where only botocore can tell."""
    name = profile or os.environ.get("AWS_DEFAULT_PROFILE") or os.environ.get("AWS_PROFILE") or "default"
    config = _sections(os.environ.get("AWS_CONFIG_FILE") or os.path.join("~", ".aws", "config"))
    credentials = _sections(os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.join("~", ".aws", "credentials"))
    if config is None or credentials is None or any(quote in section for section in config for quote in "\"'"):
        return None  # unreadable, or a quoted profile name (botocore splits section names as a shell would)
    named = [section for section in config if _profile_name(section) == name]
    if len(named) > 1 or (not named and name not in credentials):
        return None
    merged = {**(config[named[0]] if named else {}), **credentials.get(name, {})}
    if not set(merged) <= PLAIN or any(value.startswith("\n") for value in merged.values()):
        return None
    region = merged.get("region") or None
    keys = credentials.get(name, {})
    if not any(key in keys for key in KEYS) or any(os.environ.get(variable) for variable in CREDENTIAL_VARIABLES):
        return PlainProfile(region)  # the keys, if any, are botocore's to find
    access_key, secret_key = keys.get("aws_access_key_id"), keys.get("aws_secret_access_key")
    if not access_key or not secret_key:
        return None
    return PlainProfile(region, access_key, secret_key, keys.get("aws_session_token") or keys.get("aws_security_token") or "")


def _sections(path: str) -> Optional[Dict[str, Dict[str, str]]]:
    """The file's sections as botocore's parser reads them; {} for no file; None when it does not parse."""
    import configparser

    parser = configparser.RawConfigParser()
    try:
        parser.read(os.path.expanduser(path))
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    return {section: dict(parser.items(section)) for section in parser.sections()}


def _profile_name(section: str) -> Optional[str]:
    """The profile a config file section is for (``[profile NAME]``, ``[default]``); None for other sections."""
    if section == "default":
        return "default"
    words = section.split()
    return words[1] if len(words) == 2 and words[0] == "profile" else None
