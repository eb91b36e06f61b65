"""The region every command uses unless told: AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1.

Light on purpose (no botocore, no pydantic): ``app/early_start.py`` reads the region before the
command line library loads. botocore (~0.2 s to import) is loaded only when a profile or an AWS
config file could name a region.
"""
from __future__ import annotations

import os
from typing import Optional

from cfnrun.model.errors import CfnrunError
from cfnrun.runtime.environment import DEFAULT_REGION


def local_region(profile: Optional[str] = None) -> str:
    return region_from_environment() or profile_region(profile) or DEFAULT_REGION


def region_from_environment() -> Optional[str]:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def region_needs_botocore(profile: Optional[str] = None) -> bool:
    """Whether a profile or an AWS config file could name the region (only botocore reads those)."""
    if region_from_environment():
        return False
    config = os.environ.get("AWS_CONFIG_FILE") or os.path.join("~", ".aws", "config")
    named = profile or os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE")
    return named is not None or os.path.exists(os.path.expanduser(config))


def profile_region(profile: Optional[str] = None) -> Optional[str]:
    if not region_needs_botocore(profile):
        return None
    from cfnrun.invoker.aws_files import plain_profile

    plain = plain_profile(profile)
    if plain is not None:  # the region botocore would read, read without it
        return plain.region
    import botocore.exceptions
    import botocore.session

    try:
        return botocore.session.Session(profile=profile).get_config_variable("region")
    except botocore.exceptions.ProfileNotFound:
        raise no_such_profile(profile) from None
    except botocore.exceptions.BotoCoreError:
        return None


def guessed_region(profile: Optional[str] = None) -> str:
    """What ``local_region`` most likely answers, read without botocore: for a guess that may be wrong (the early start's)."""
    return region_from_environment() or config_file_region(profile) or DEFAULT_REGION


def config_file_region(profile: Optional[str] = None) -> Optional[str]:
    """The ``region`` in the profile's section of the AWS config file, read with the standard library; None if it names none.

    The profile as botocore picks it (--profile, else AWS_DEFAULT_PROFILE, else AWS_PROFILE, else
    ``default``) and the file as it finds it (AWS_CONFIG_FILE, else ~/.aws/config), but not all of
    botocore's reading (a region in the credentials file, say): a guess.
    """
    import configparser

    name = profile or os.environ.get("AWS_DEFAULT_PROFILE") or os.environ.get("AWS_PROFILE") or "default"
    path = os.path.expanduser(os.environ.get("AWS_CONFIG_FILE") or os.path.join("~", ".aws", "config"))
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    for section in [f"profile {name}"] + (["default"] if name == "default" else []):
        if parser.has_section(section):
            return parser.get(section, "region", fallback="").strip() or None
    return None


def no_such_profile(profile: Optional[str]) -> CfnrunError:
    named = f"--profile {profile}" if profile else f"AWS_PROFILE={os.environ.get('AWS_PROFILE', '')}"
    return CfnrunError(f"{named}: no such profile in your AWS configuration")
