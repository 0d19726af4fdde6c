"""The Python client against a real powercontext server serving HTTPS with a private CA (``ca_file=``)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from powercontext import APIError, Client, ConnectionFailedError
from powercontext.tls import ssl_context

from .server import Server
from .tls_certs import HAVE_OPENSSL, make_certs


class TLSServer(Server):
    """The test server with --tls-cert-file/--tls-key-file: its url is https:// and readiness is probed over TLS."""

    def __init__(self, certs_dir: str) -> None:
        self.certs = make_certs(certs_dir)
        super().__init__(["--tls-cert-file", self.certs["tls.crt"], "--tls-key-file", self.certs["tls.key"]])

    def _wait_ready(self, timeout: float) -> bool:
        self.url = self.url.replace("http://", "https://", 1)
        ctx = ssl_context(self.certs["ca.pem"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/health/ready", timeout=2, context=ctx) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        return False


@unittest.skipUnless(HAVE_OPENSSL or os.environ.get("PC_TEST_REQUIRE_CLIENTS"), "openssl not found")
class TLSTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.certs_dir = tempfile.mkdtemp(prefix="pc-py-tls-")
        cls.server = TLSServer(cls.certs_dir).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        shutil.rmtree(cls.certs_dir, ignore_errors=True)

    def test_https_with_ca_file(self) -> None:
        self.assertTrue(self.server.url.startswith("https://"))
        pc = Client(self.server.url, token=self.server.token, ca_file=self.server.certs["ca.pem"])
        pc.capture_source("py-tls", "captured over TLS", source_id="tls-1")
        self.assertEqual([s.content for s in pc.list_sources("py-tls").items], ["captured over TLS"])

    def test_https_without_ca_file_is_refused(self) -> None:
        pc = Client(self.server.url, token=self.server.token)
        with self.assertRaises(ConnectionFailedError):
            pc.list_operations()

    def test_cleartext_on_the_tls_port_is_refused(self) -> None:
        pc = Client(self.server.url.replace("https://", "http://", 1), token=self.server.token)
        with self.assertRaises(APIError) as caught:
            pc.list_operations()
        self.assertEqual(caught.exception.status, 400)

    def test_unreadable_ca_file_fails_at_construction(self) -> None:
        with self.assertRaises(OSError):
            Client(self.server.url, ca_file=os.path.join(self.certs_dir, "missing.pem"))


if __name__ == "__main__":
    unittest.main()
