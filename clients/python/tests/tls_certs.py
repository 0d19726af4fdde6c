"""A throwaway certificate authority and a server certificate for 127.0.0.1, made with the ``openssl`` command."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict

HAVE_OPENSSL = shutil.which("openssl") is not None


def _openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(directory: str) -> Dict[str, str]:
    """Writes ca.pem, tls.crt and tls.key (ECDSA P-256, valid a day) into ``directory``; returns their paths."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=pc test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=directory)
    _openssl("req", *ec, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=127.0.0.1", cwd=directory)
    with open(os.path.join(directory, "ext.cnf"), "w", encoding="ascii") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
    _openssl("x509", "-req", "-in", "tls.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "tls.crt", "-days", "1", "-extfile", "ext.cnf", cwd=directory)
    return {name: os.path.join(directory, name) for name in ("ca.pem", "tls.crt", "tls.key")}
