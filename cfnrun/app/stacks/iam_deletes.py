"""What the service's deletes of AWS::IAM::Role and AWS::IAM::ManagedPolicy do that moto's CloudFormation does not.

On AWS, deleting a role through CloudFormation detaches its managed policies and deletes its
inline ones before DeleteRole, and deleting a managed policy detaches it from every role, user and
group and deletes its versions before DeletePolicy (the IAM API refuses DeleteRole and DeletePolicy
otherwise: "Cannot delete entity, must detach all policies first."). moto's CloudFormation (5.2)
deletes a role's inline policies only and does nothing at all for a managed policy, so a SAM stack
whose connectors or policies attach a managed policy of the stack to a function's role (``sam init``'s
web app) could not delete that role: its delete, or its rollback, ended ``DELETE_FAILED``.

So before the resource's stack on the endpoint is deleted, a role is emptied and a managed policy
detached through the endpoint's IAM API; after it, a managed policy still there is deleted with its
versions. A role or policy already gone is deleted.
"""
from __future__ import annotations

from cfnrun.stacks.provisioning import ResourceWork
from cfnrun.app.stacks.direct_types import EndpointService

ROLE = "AWS::IAM::Role"
MANAGED_POLICY = "AWS::IAM::ManagedPolicy"
GONE = ("NoSuchEntity",)


class IamDeletes:
    """Roles emptied and managed policies detached and deleted on the endpoint's IAM, around their stacks' delete there."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        self.iam = EndpointService("iam", "IAM", endpoint_url, region)

    async def before(self, work: ResourceWork) -> None:
        if not work.physical_id:
            return
        if work.type_name == ROLE:
            await self._emptied(work.physical_id)
        elif work.type_name == MANAGED_POLICY:
            await self._detached(work.physical_id)

    async def after(self, work: ResourceWork) -> None:
        if work.type_name == MANAGED_POLICY and work.physical_id:
            await self._policy_deleted(work.physical_id)

    async def _emptied(self, role: str) -> None:
        attached = await self.iam.unless_gone(GONE, "list_attached_role_policies", RoleName=role)
        for policy in (attached or {}).get("AttachedPolicies", []):
            await self.iam.unless_gone(GONE, "detach_role_policy", RoleName=role, PolicyArn=policy["PolicyArn"])
        inline = await self.iam.unless_gone(GONE, "list_role_policies", RoleName=role)
        for name in (inline or {}).get("PolicyNames", []):
            await self.iam.unless_gone(GONE, "delete_role_policy", RoleName=role, PolicyName=name)

    async def _detached(self, arn: str) -> None:
        entities = await self.iam.unless_gone(GONE, "list_entities_for_policy", PolicyArn=arn) or {}
        for role in entities.get("PolicyRoles", []):
            await self.iam.unless_gone(GONE, "detach_role_policy", RoleName=role["RoleName"], PolicyArn=arn)
        for user in entities.get("PolicyUsers", []):
            await self.iam.unless_gone(GONE, "detach_user_policy", UserName=user["UserName"], PolicyArn=arn)
        for group in entities.get("PolicyGroups", []):
            await self.iam.unless_gone(GONE, "detach_group_policy", GroupName=group["GroupName"], PolicyArn=arn)

    async def _policy_deleted(self, arn: str) -> None:
        versions = await self.iam.unless_gone(GONE, "list_policy_versions", PolicyArn=arn)
        if versions is None:
            return  # the endpoint's CloudFormation deleted it
        for version in versions.get("Versions", []):
            if not version.get("IsDefaultVersion"):
                await self.iam.unless_gone(GONE, "delete_policy_version", PolicyArn=arn, VersionId=version["VersionId"])
        await self.iam.unless_gone(GONE, "delete_policy", PolicyArn=arn)
