"""``stack test``'s hints name the command the user ran, and an endpoint's failure says what it answered (#30.7)."""
from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

from conftest import cfnrun
from test_aws_calls import NO_LOCAL_CREDENTIALS

BUCKET_ONLY = """
Resources:
  Bucket:
    Type: AWS::S3::Bucket
"""


@pytest.fixture
def broken_endpoint() -> Iterator[str]:
    """An "AWS endpoint" that answers every call with an HTML page, as a stand-in that broke on a call does."""

    class Broken(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b"<html><body><h1>Internal error<br>KeyError: 'Bucket' in the stand-in</body></html>"  # not XML
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_aws_resource_without_moto_names_stack_tests_own_flag(sample: Callable[[str], Path], tmp_path: Path) -> None:
    template = tmp_path / "bucket.yaml"
    template.write_text(BUCKET_ONLY)
    run = cfnrun("stack", "test", str(template), "--virtual-clock", "--provider", str(sample("note")), cwd=tmp_path, env=NO_LOCAL_CREDENTIALS, timeout=180)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "add --moto to cfnrun stack test" in run.stdout, run.stdout
    assert "start serve with" not in run.stdout + run.stderr


def test_an_endpoint_that_breaks_says_what_it_answered(sample: Callable[[str], Path], tmp_path: Path, broken_endpoint: str) -> None:
    template = tmp_path / "bucket.yaml"
    template.write_text(BUCKET_ONLY)
    run = cfnrun("stack", "test", str(template), "--virtual-clock", "--aws-endpoint", broken_endpoint, "--provider", str(sample("note")),
                 cwd=tmp_path, env=NO_LOCAL_CREDENTIALS, timeout=180)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"the AWS endpoint {broken_endpoint} failed answering" in run.stdout, run.stdout
    assert "KeyError: 'Bucket' in the stand-in" in run.stdout
    assert "see its log" not in run.stdout + run.stderr
