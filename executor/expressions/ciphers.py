"""Doris's block ciphers (be/src/util/encryption_util.cpp over OpenSSL), through the
`cryptography` package:

    aes_encrypt(str, key [, iv [, mode]]) / aes_decrypt(...)   modes AES_{128,192,256}_{ECB,
                                            CBC, CFB, CFB8, CFB128, OFB, CTR}
    sm4_encrypt(str, key [, iv [, mode]]) / sm4_decrypt(...)   modes SM4_128_{ECB, CBC, CFB128,
                                            OFB, CTR}

Without a mode argument the mode is the session's `block_encryption_mode` when it names one of
the function's family, else AES_128_ECB / SM4_128_ECB (Doris 2.1.7 on); a mode that needs an
initialisation vector with no iv argument is refused with Doris's "Incorrect parameter count"
error. The key is folded as MySQL does (create_key): a buffer of the mode's key size, zeroed,
each key byte XOR-ed in at its position modulo the size. The iv is "DORISDORISDORIS_" with the
given bytes written over its start (at most 16). ECB and CBC pad with PKCS7; a ciphertext that
does not decrypt gives NULL. The result is bytes (Arrow binary, Doris's VARCHAR of raw bytes:
see it through to_base64 or hex); a decrypted text that is valid UTF-8 comes back as a string.

Ciphers have no vectorised form: each runs once per distinct (text, key, iv, mode) row.
AES_*_CFB1 is not offered by `cryptography` and is refused.
"""

from __future__ import annotations

import pyarrow as pa
from cryptography.hazmat.decrepit.ciphers import modes as old_modes
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import all_scalar, map_distinct_rows, to_array

STRING = pa.string()
_IV_DEFAULT = b"DORISDORISDORIS_"
_MODES = {"ECB": None, "CBC": modes.CBC, "CFB": old_modes.CFB, "CFB128": old_modes.CFB,
          "CFB8": old_modes.CFB8, "OFB": old_modes.OFB, "CTR": modes.CTR}
_FAMILIES = {"AES": (algorithms.AES, ("128", "192", "256")),
             "SM4": (algorithms.SM4, ("128",))}
_SM4_MODES = ("ECB", "CBC", "CFB128", "OFB", "CTR")


def _mode(name: str, family: str) -> tuple[type, int, str] | None:
    """(algorithm, key bytes, block mode) of a mode name such as AES_256_CBC, or None."""
    parts = name.upper().split("_")
    if len(parts) != 3 or parts[0] != family:
        return None
    algorithm, sizes = _FAMILIES[family]
    if parts[1] not in sizes or parts[2] not in _MODES or \
            (family == "SM4" and parts[2] not in _SM4_MODES):
        return None
    return algorithm, int(parts[1]) // 8, parts[2]


def fold_key(key: bytes, size: int) -> bytes:
    out = bytearray(size)
    for i, b in enumerate(key):
        out[i % size] ^= b
    return bytes(out)


def _cipher(mode: tuple[type, int, str], key: bytes, iv: bytes | None) -> Cipher:
    algorithm, size, block = mode
    iv16 = _IV_DEFAULT if iv is None else (iv[:16] + _IV_DEFAULT[len(iv[:16]):])
    chaining = modes.ECB() if _MODES[block] is None else _MODES[block](iv16)
    return Cipher(algorithm(fold_key(key, size)), chaining)


def encrypt(data: bytes, key: bytes, iv: bytes | None, mode: tuple) -> bytes:
    enc = _cipher(mode, key, iv).encryptor()
    if mode[2] in ("ECB", "CBC"):
        pad = padding.PKCS7(128).padder()
        data = pad.update(data) + pad.finalize()
    return enc.update(data) + enc.finalize()


def decrypt(data: bytes, key: bytes, iv: bytes | None, mode: tuple) -> bytes | None:
    try:
        dec = _cipher(mode, key, iv).decryptor()
        plain = dec.update(data) + dec.finalize()
        if mode[2] in ("ECB", "CBC"):
            unpad = padding.PKCS7(128).unpadder()
            plain = unpad.update(plain) + unpad.finalize()
    except ValueError:
        return None
    return plain


def as_bytes(v: Value) -> Value:
    """A string or binary value as Arrow binary (the bytes Doris's functions read)."""
    if pa.types.is_binary(v.type) or pa.types.is_large_binary(v.type):
        return v
    return cast_value(v, STRING).cast(pa.binary())


def text_or_bytes(arr: pa.Array) -> pa.Array:
    """Binary results as a string array when every value is UTF-8 (decrypted text)."""
    try:
        return arr.cast(STRING)
    except pa.ArrowInvalid:
        return arr


def _handler(family: str, decrypting: bool):
    name = f"{family.lower()}_{'decrypt' if decrypting else 'encrypt'}"

    def handler(node: exp.Expression, frame: Frame) -> Value:
        args = call_args(node)
        if not 2 <= len(args) <= 4:
            raise ExpressionError(f"{name} takes 2 to 4 arguments")
        values = [frame.eval(a) for a in args]
        default = f"{family}_128_ECB"
        if len(values) < 4:
            session = (frame.ctx.block_encryption_mode or "").upper()
            chosen = session if session.startswith(family + "_") else default
            if _mode(chosen, family) is None:
                raise ExpressionError(f"session variable block_encryption_mode is invalid: "
                                      f"{chosen}")
            if len(values) == 2 and not chosen.endswith("_ECB"):
                raise ExpressionError(
                    "Incorrect parameter count in the call to native function "
                    f"'{family.lower()}_encrypt' or '{family.lower()}_decrypt'")
            values.append(pa.scalar(chosen, STRING))
        if len(values) == 3:
            values.insert(2, pa.scalar(None, pa.binary()))
        scalar = all_scalar(*values)
        rows = 1 if scalar else frame.n
        arrays = [to_array(as_bytes(v), rows) for v in values[:3]]
        arrays.append(to_array(cast_value(values[3], STRING), rows))
        iv_given = len(args) >= 3

        def run(data: bytes, key: bytes, iv: bytes | None, mode_name: str) -> bytes | None:
            mode = _mode(mode_name, family)
            if mode is None:
                if mode_name.upper().endswith("_CFB1") and mode_name.upper().startswith(family):
                    raise ExpressionError(f"{name}: mode {mode_name} is not supported")
                return None
            used_iv = iv if iv_given else None
            return decrypt(data, key, used_iv, mode) if decrypting \
                else encrypt(data, key, used_iv, mode)
        out = _rows(arrays, run, iv_given)
        if decrypting:
            out = text_or_bytes(out)
        return out[0] if scalar else out
    return handler


def _rows(arrays: list[pa.Array], fn, iv_given: bool) -> pa.Array:
    """fn once per distinct row; NULL when the text, key or mode is NULL (a NULL iv argument
    stands for no iv only when none was given)."""
    if not iv_given:
        data, key, _, mode = arrays
        return map_distinct_rows([data, key, mode], lambda d, k, m: fn(d, k, None, m),
                                 pa.binary())
    return map_distinct_rows(arrays, fn, pa.binary())


HANDLERS: dict = {}
FUNCTIONS = {
    "AES_ENCRYPT": _handler("AES", False), "AES_DECRYPT": _handler("AES", True),
    "SM4_ENCRYPT": _handler("SM4", False), "SM4_DECRYPT": _handler("SM4", True),
}
