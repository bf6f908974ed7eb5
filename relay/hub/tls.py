"""HTTPS for the hub: a certificate authority of its own and a server certificate it signs.

A GitHub Enterprise Server answers at ``https://HOST/api/v3``, and clients such as ``gh``
speak HTTPS to any host but github.com's special cases. ``relay hub --tls`` therefore makes
(once per data folder) a CA and, at each start, a server certificate for the addresses it
serves, signed by that CA. The CA's certificate is written to ``DATA/tls/ca.pem``, the file
a client trusts (``SSL_CERT_FILE``, ``GIT_SSL_CAINFO``); its key never leaves the folder
(mode 0600). Keeping the CA across restarts keeps every client's trust valid.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from relay.errors import LocalUsageError

TLS_DIR = "tls"
CA_FILE = "ca.pem"
_CA_KEY = "ca-key.pem"
_CERT = "server.pem"
_KEY = "server-key.pem"
_LOOPBACK = ("127.0.0.1", "::1", "localhost")
_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class TlsFiles:
    """Where one hub's certificates are: the CA clients trust, and the server's pair."""

    ca: Path
    cert: Path
    key: Path

    def context(self) -> ssl.SSLContext:
        """The server side's TLS context."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


def ca_path(data_dir: Path) -> Path:
    """The CA certificate a client of the hub in ``data_dir`` trusts."""
    return data_dir / TLS_DIR / CA_FILE


def prepare(data_dir: Path, host: str) -> TlsFiles:
    """The CA (made if missing) and a fresh server certificate for ``host`` and loopback.

    Raises LocalUsageError, in one line, when the folder cannot hold them."""
    folder = data_dir / TLS_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ca_cert, ca_key = _ca(folder)
        _server(folder, host, ca_cert, ca_key)
    except (OSError, ValueError) as err:
        raise LocalUsageError(
            f"cannot make the hub's certificates in {folder}: {err}",
            hint="name a writable directory of the hub's own with --data",
        ) from None
    return TlsFiles(ca=folder / CA_FILE, cert=folder / _CERT, key=folder / _KEY)


def _write_private(path: Path, data: bytes) -> None:
    """Write a key readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _key_pem(key: object) -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _ca(folder: Path) -> tuple[object, object]:
    """The folder's CA (certificate, key), made on first use and valid for ten years."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cert_path, key_path = folder / CA_FILE, folder / _CA_KEY
    if cert_path.exists() and key_path.exists():
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        if cert.not_valid_after_utc > datetime.datetime.now(datetime.UTC) + 30 * _DAY:
            return cert, key
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "relay hub local CA")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _DAY)
        .not_valid_after(now + 3650 * _DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )
    _write_private(key_path, _key_pem(key))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _server(folder: Path, host: str, ca_cert: object, ca_key: object) -> None:
    """A server certificate for ``host`` and the loopback names, valid for a year."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    assert isinstance(ca_cert, x509.Certificate)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    names: list[x509.GeneralName] = []
    for each in dict.fromkeys((*_LOOPBACK, host)):
        if each in ("", "0.0.0.0", "::"):
            continue
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(each)))
        except ValueError:
            names.append(x509.DNSName(each))
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host or "localhost")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _DAY)
        .not_valid_after(now + 365 * _DAY)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_private(folder / _KEY, _key_pem(key))
    (folder / _CERT).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
