"""The one-off SSH key pair of an NCCL run: mpirun on each launcher reaches its worker's
sshd with it; made here, kept only in the run's Secret, deleted with the namespace."""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def ssh_keypair() -> tuple[str, str]:
    """An Ed25519 key as OpenSSH writes it: the private key file and the public key line."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    ).decode()
    return private, f"{public} gpunode-validate\n"
