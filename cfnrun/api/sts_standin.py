"""A local stand-in for the two STS calls cloudformation-cli makes before testing.

``cfn test`` and ``cfn invoke`` ask STS (at its fixed AWS address) for the caller's
account and, with long-lived keys, for a session token. With no AWS account or no
network, cfnrun points those calls here and answers them with placeholders.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Dict

from aiohttp import web

from cfnrun.api import service_errors

NAMESPACE = "https://sts.amazonaws.com/doc/2011-06-15/"


def _xml(action: str, result: str) -> web.Response:
    body = (
        f'<{action}Response xmlns="{NAMESPACE}">'
        f"<{action}Result>{result}</{action}Result>"
        f"<ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>"
        f"</{action}Response>"
    )
    return web.Response(body=body, content_type="text/xml")


class StsStandIn:
    def __init__(self, account_id: str) -> None:
        self.account_id = account_id

    async def handle(self, request: web.Request) -> web.StreamResponse:
        form: Dict[str, str] = {k: str(v) for k, v in (await request.post()).items()}
        action = form.get("Action")
        if action == "GetCallerIdentity":
            return _xml(
                action,
                f"<Arn>arn:aws:iam::{self.account_id}:user/cfnrun-local</Arn>"
                f"<UserId>AIDACFNRUNLOCAL</UserId><Account>{self.account_id}</Account>",
            )
        if action == "GetSessionToken":
            expires = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            return _xml(
                action,
                "<Credentials><AccessKeyId>ASIACFNRUNLOCAL</AccessKeyId>"
                "<SecretAccessKey>cfnrun-local-placeholder-secret</SecretAccessKey>"
                "<SessionToken>cfnrun-local-placeholder-token</SessionToken>"
                f"<Expiration>{expires}</Expiration></Credentials>",
            )
        raise service_errors.ServiceError(
            400, "InvalidAction", f"cfnrun's STS stand-in answers GetCallerIdentity and GetSessionToken, not {action}"
        )
