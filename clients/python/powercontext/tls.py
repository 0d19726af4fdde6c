"""TLS settings of the client: trusting a private certificate authority (``Client(..., ca_file=...)``)."""

from __future__ import annotations

import ssl
from typing import Optional

__all__ = ["ssl_context"]


def ssl_context(ca_file: Optional[str]) -> Optional[ssl.SSLContext]:
    """An SSL context that trusts only the PEM certificates in ``ca_file`` (TLS 1.2 or newer, host names checked),
    or ``None`` (the system's trust store) without one. A file that cannot be read raises ``OSError`` or
    ``ssl.SSLError`` at once, not at the first request."""
    if not ca_file:
        return None
    ctx = ssl.create_default_context(cafile=ca_file)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx
