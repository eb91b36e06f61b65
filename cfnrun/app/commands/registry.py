"""``cfnrun registry``: what a serve has registered (types, versions, default, test status), and removing it, without the aws CLI.

It asks the serve at ``--endpoint`` through its CloudFormation API, as any client would.
Exit status: 0 done, 1 serve refused (its error is printed), 2 usage error or no serve there.
"""
from __future__ import annotations

from typing import Any, List
from urllib.parse import unquote, urlparse

from cfnrun.app.commands.common import EXIT_FAILED, EXIT_SUCCESS, echo, usage_error
from cfnrun.app.early_start import EarlyStart
from cfnrun.app.settings.registry import RegistryListOptions, RegistryRemoveOptions

KINDS = ("RESOURCE", "HOOK", "MODULE")


def _client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "cloudformation", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="cfnrun", aws_secret_access_key="cfnrun",
        config=Config(retries={"max_attempts": 1}),
    )


def run(options: RegistryListOptions, early: EarlyStart) -> int:
    """List each registered type with its versions (default, test status), and each --provider project's type, where it comes from."""
    from botocore.exceptions import BotoCoreError, ClientError

    client = _client(options.endpoint)
    lines: List[str] = []
    try:
        for kind in KINDS:
            for summary in client.list_types(Visibility="PRIVATE", Type=kind)["TypeSummaries"]:
                if "DefaultVersionId" not in summary and not summary.get("IsActivated"):  # a --provider project's type: served, not registered
                    source = urlparse(client.describe_type(Type=kind, TypeName=summary["TypeName"]).get("SourceUrl", "")).path
                    lines.append(f"{kind:<8} {summary['TypeName']} (served from --provider {unquote(source)}, not registered)")
                    continue
                activated = f" (activated {summary['OriginalTypeName']})" if summary.get("IsActivated") else ""
                lines.append(f"{kind:<8} {summary['TypeName']}{activated}")
                versions = client.list_type_versions(Type=kind, TypeName=summary["TypeName"])["TypeVersionSummaries"]
                for version in versions:
                    if summary.get("IsActivated"):  # its tests and default version are its publisher's: the public version it runs
                        lines.append(f"  {version['VersionId']}  public {version.get('PublicVersionNumber')}  "
                                     f"activated {version['TimeCreated']:%Y-%m-%d %H:%M:%S}")
                        continue
                    tests = client.describe_type(Arn=version["Arn"]).get("TypeTestsStatus", "NOT_TESTED")
                    default = "default" if version.get("IsDefaultVersion") else ""
                    lines.append(f"  {version['VersionId']}  {default:<7}  tests {tests:<11}  registered {version['TimeCreated']:%Y-%m-%d %H:%M:%S}")
    except ClientError as error:
        echo(f"cfnrun registry: {options.endpoint} refused: {error.response.get('Error', {}).get('Message')}", err=True)
        return EXIT_FAILED
    except BotoCoreError as error:
        return usage_error(f"no cfnrun serve answers at {options.endpoint} ({error}); start one, or name it with --endpoint URL")
    for line in lines or [f"nothing is registered on {options.endpoint}"]:
        echo(line)
    return EXIT_SUCCESS


def remove(options: RegistryRemoveOptions, early: EarlyStart) -> int:
    """Deregister one version, or every version of a type: the others by their VersionId, then the type (the service refuses its
    default version by VersionId, even the last)."""
    from botocore.exceptions import BotoCoreError, ClientError

    if not options.type_name:
        return usage_error("name the type to remove: cfnrun registry remove Org::Svc::Thing")
    if options.kind not in KINDS:
        return usage_error(f"--type {options.kind}: one of {', '.join(KINDS)}")
    client = _client(options.endpoint)
    named = {"Type": options.kind, "TypeName": options.type_name}
    try:
        if options.version_id:
            client.deregister_type(**named, VersionId=options.version_id)
            echo(f"removed {options.type_name} version {options.version_id}")
            return EXIT_SUCCESS
        versions = client.list_type_versions(**named)["TypeVersionSummaries"]
        for version in versions:
            if not version.get("IsDefaultVersion"):
                client.deregister_type(**named, VersionId=version["VersionId"])
        client.deregister_type(**named)  # the default, the last one left: with the type
        echo(f"removed {options.type_name} ({len(versions)} version(s))")
    except ClientError as error:
        echo(f"cfnrun registry: {options.endpoint} refused: {error.response.get('Error', {}).get('Message')}", err=True)
        return EXIT_FAILED
    except BotoCoreError as error:
        return usage_error(f"no cfnrun serve answers at {options.endpoint} ({error}); start one, or name it with --endpoint URL")
    return EXIT_SUCCESS
