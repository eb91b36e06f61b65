"""aiohttp imported by serve's endpoint reads the CA bundle only when a client first connects over TLS, and its clients work as before."""
from __future__ import annotations

import datetime
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import PATIENCE_S, ROOT

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

# In a fresh interpreter: aiohttp imported as the endpoint does, then the CA bundle (SSL_CERT_FILE) written, then
# one client call over TLS verified against it, one unverified, one with the client's own context.
CLIENT = textwrap.dedent(
    """
    import asyncio, shutil, ssl, sys
    import cfnrun.app.endpoint  # noqa: F401 - imports aiohttp first thing
    from aiohttp import ClientSession, web

    ca_file, server_cert, server_key, bundle = sys.argv[1:5]

    async def main():
        app = web.Application()
        app.router.add_get("/", lambda request: web.Response(text="hello"))
        runner = web.AppRunner(app)
        await runner.setup()
        served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        served.load_cert_chain(server_cert, server_key)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=served)
        await site.start()
        port = runner.addresses[0][1]
        shutil.copyfile(ca_file, bundle)  # only now: a bundle read at import would not have it
        async with ClientSession() as session:
            async with session.get(f"https://localhost:{port}/") as answer:
                print("verified", answer.status, await answer.text())
            async with session.get(f"https://localhost:{port}/", ssl=False) as answer:
                print("unverified", answer.status)
            mine = ssl.create_default_context(cafile=ca_file)
            async with session.get(f"https://localhost:{port}/", ssl=mine) as answer:
                print("own context", answer.status)
        await runner.cleanup()

    asyncio.run(main())
    """
)


def _certificates(folder: Path) -> tuple:
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cfnrun test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca_file, cert_file, key_file


def test_a_client_verifies_against_the_ca_bundle_as_it_is_at_its_first_tls_connection(tmp_path: Path) -> None:
    ca_file, cert_file, key_file = _certificates(tmp_path)
    bundle = tmp_path / "bundle.pem"  # SSL_CERT_FILE: absent while aiohttp is imported
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    env = {"PATH": "/usr/bin:/bin", "SSL_CERT_FILE": str(bundle), "SSL_CERT_DIR": str(tmp_path / "no-such-dir"), "PYTHONPATH": str(ROOT)}
    ran = subprocess.run(
        [sys.executable, str(script), str(ca_file), str(cert_file), str(key_file), str(bundle)],
        env=env, capture_output=True, text=True, timeout=PATIENCE_S, cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["verified 200 hello", "unverified 200", "own context 200"]


def test_a_context_made_on_another_thread_while_aiohttp_imports_reads_the_bundle_at_once(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import ssl, sys, threading
        from cfnrun.app.aiohttp_import import import_aiohttp

        seen = []

        def elsewhere():
            seen.append(ssl.create_default_context().cert_store_stats()["x509_ca"])

        class WhileImporting:  # asked for each module aiohttp imports: makes a context on another thread once
            def find_spec(self, name, path=None, target=None):
                if name == "aiohttp.connector" and not seen:
                    thread = threading.Thread(target=elsewhere)
                    thread.start()
                    thread.join()
                return None

        sys.meta_path.insert(0, WhileImporting())
        import_aiohttp()
        print(seen, ssl.create_default_context().cert_store_stats()["x509_ca"], "set_default_verify_paths" in ssl.SSLContext.__dict__)
        """
    )
    ca_file, _, _ = _certificates(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "SSL_CERT_FILE": str(ca_file)}
    ran = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=PATIENCE_S, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["[1]", "1", "False"]  # the bundle's one CA, read on the other thread at once; ssl as it was
