"""Run cloudformation-cli's ``cfn``, optionally with its STS calls sent to cfnrun's stand-in.

``python -m cfnrun.app.cfn_offline [--sts-endpoint URL] [cfn arguments...]``

cloudformation-cli builds its STS clients with the fixed AWS address from
``rpdk.core.boto_helpers.get_service_endpoint``; this swaps that one lookup for
the local endpoint and then runs ``cfn`` unchanged. With ``--sts-endpoint`` and no credentials
in the environment (no AWS_ACCESS_KEY_ID, no AWS_PROFILE) it supplies placeholder keys, since
cloudformation-cli signs even the calls that go to the stand-in.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, List, Optional

from cfnrun.invoker.credentials import PLACEHOLDER


def run_cfn(argv: List[str], sts_endpoint: Optional[str]) -> None:
    from rpdk.core import boto_helpers
    from rpdk.core.cli import main as cfn_main

    if sts_endpoint is None:
        cfn_main(args_in=argv)
        return
    aws_endpoint: Callable[[str, str], str] = boto_helpers.get_service_endpoint

    def endpoint(service: str, region: str) -> str:
        return sts_endpoint if service == "sts" else aws_endpoint(service, region)

    boto_helpers.get_service_endpoint = endpoint
    cfn_main(args_in=argv)


def offline_credentials() -> None:
    """cloudformation-cli signs its STS calls, so it needs some keys; offline, placeholders do."""
    if os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"):
        return
    os.environ["AWS_ACCESS_KEY_ID"] = PLACEHOLDER.accessKeyId
    os.environ["AWS_SECRET_ACCESS_KEY"] = PLACEHOLDER.secretAccessKey
    os.environ["AWS_SESSION_TOKEN"] = PLACEHOLDER.sessionToken


def main(argv: List[str]) -> None:
    if argv[:1] == ["--sts-endpoint"]:
        if len(argv) < 2:
            sys.exit("usage: python -m cfnrun.app.cfn_offline [--sts-endpoint URL] [cfn arguments...]")
        offline_credentials()
        run_cfn(argv[2:], argv[1])
    else:
        run_cfn(argv, None)


if __name__ == "__main__":
    main(sys.argv[1:])
