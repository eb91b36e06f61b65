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
    import botocore.exceptions
    import botocore.session

    try:
        return botocore.session.Session(profile=profile).get_config_variable("region")
    except botocore.exceptions.ProfileNotFound:
        raise no_such_profile(profile) from None
    except botocore.exceptions.BotoCoreError:
        return None


def no_such_profile(profile: Optional[str]) -> CfnrunError:
    named = f"--profile {profile}" if profile else f"AWS_PROFILE={os.environ.get('AWS_PROFILE', '')}"
    return CfnrunError(f"{named}: no such profile in your AWS configuration")
