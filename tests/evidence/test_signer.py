"""The server's signatures (`evidence.signatures.Signer`): made by libsodium, they are the
very signatures OpenSSL makes with the same key (Ed25519 is deterministic), so any verifier
of docs/record.md checks them, and they verify with the public key the server lists."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given
from hypothesis import strategies as st

from evidence.signatures import Signer, key_id_of, receipt_message, verifies

KEY = Ed25519PrivateKey.generate()
SIGNER = Signer(KEY)


def test_the_signers_public_key_and_its_id_are_those_of_its_private_key() -> None:
    public = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert SIGNER.public == public and SIGNER.key_id == key_id_of(public)


@given(st.binary(max_size=2000))
def test_every_signature_is_the_one_openssl_makes_and_it_verifies(message: bytes) -> None:
    signature = SIGNER.sign(message)
    assert signature == KEY.sign(message).hex()
    assert verifies(SIGNER.public.hex(), signature, message)
    assert not verifies(SIGNER.public.hex(), signature, message + b"!")


def test_a_receipt_is_signed_over_its_documented_message() -> None:
    receipt = SIGNER.receipt("g1", 57, "ab" * 32, "2026-12-03T02:57:51.264Z")
    message = receipt_message("g1", 57, "ab" * 32, "2026-12-03T02:57:51.264Z", SIGNER.key_id)
    assert verifies(SIGNER.public.hex(), receipt.signature, message)
