"""``--moto``: an embedded moto server standing in for AWS, for the life of one command.

moto (an optional extra: ``pip install 'cfnrun[moto]'``) answers the AWS APIs from
memory. The server listens on 127.0.0.1 on a free port, in a thread of cfnrun's own
process, so it stops when the command ends and leaves nothing behind.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator, Optional

from cfnrun.model.endpoint_url import check_endpoint_url
from cfnrun.model.errors import CfnrunError

MOTO_MISSING = "--moto needs moto's server: pip install 'cfnrun[moto]' (or pip install 'moto[server]')"


def aws_endpoint_choice(aws_endpoint: Optional[str], moto: bool) -> None:
    """The two ways to reroute AWS calls exclude each other; a bad URL is refused before anything starts."""
    if aws_endpoint and moto:
        raise CfnrunError("--aws-endpoint and --moto both say where AWS calls go: pass one")
    if aws_endpoint:
        check_endpoint_url("--aws-endpoint", aws_endpoint, "http://127.0.0.1:5000")


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """Start moto's server on a free loopback port; yield its URL; stop it on the way out."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise CfnrunError(MOTO_MISSING) from None
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per AWS call otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()
