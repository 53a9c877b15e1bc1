"""A minimal, independent Cosmos SDK v0.53 tx builder for the e2e tests (stdlib only).

It signs a TxRaw with one MsgSend (SIGN_MODE_DIRECT, secp256k1) from a raw private key (the tests
take it from `kairosd keys export NAME --hex`), with every TxBody field the tests need under their
control: unordered, timeout_timestamp to the nanosecond, sequence, fee, gas, memo. That is what
the kairosd CLI cannot do (its unordered timeout is "now + --timeout"), e.g. to sign two
different txs with the same unordered nonce. Being written apart from kairosd's own encoder, it
also checks that encoder's wire format and sign bytes from the outside.

Encodings are canonical (ADR-027: fields in ascending order, no default values written), as
kairosd accepts nothing else. Signatures are RFC 6979 deterministic ECDSA over SHA-256 of the
SignDoc, low-S, 64 bytes r||s, as the Cosmos SDK requires.

Also: a bech32 codec, a generic protobuf field decoder (to read txs fetched from CometBFT) and
the query-request encodings of the module query paths.
"""

import hashlib
import hmac

# ---- protobuf (proto3) encoding

WIRE_VARINT, WIRE_LEN = 0, 2


def varint(n):
    if not 0 <= n < 1 << 64:
        raise ValueError(f"varint out of range: {n}")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, value):
    """A varint field; proto3 writes nothing for 0/false."""
    if not value:
        return b""
    if value < 0:  # int64: two's complement in 64 bits
        value += 1 << 64
    return varint(num << 3 | WIRE_VARINT) + varint(int(value))


def field_bytes(num, value, keep_empty=False):
    """A length-delimited field (bytes, string, message); nothing for an empty value unless
    keep_empty (an embedded message that is present but empty, or a repeated element)."""
    if isinstance(value, str):
        value = value.encode()
    if not value and not keep_empty:
        return b""
    return varint(num << 3 | WIRE_LEN) + varint(len(value)) + value


def decode_fields(data):
    """{field number: [values]} of one protobuf message: ints for varints, bytes for
    length-delimited fields (decode nested messages with another call)."""
    out = {}
    i = 0

    def read_varint():
        nonlocal i
        shift = result = 0
        while True:
            b = data[i]
            i += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    while i < len(data):
        key = read_varint()
        num, wire = key >> 3, key & 7
        if wire == WIRE_VARINT:
            value = read_varint()
        elif wire == WIRE_LEN:
            n = read_varint()
            value = bytes(data[i:i + n])
            i += n
        elif wire == 1:
            value = bytes(data[i:i + 8])
            i += 8
        elif wire == 5:
            value = bytes(data[i:i + 4])
            i += 4
        else:
            raise ValueError(f"unsupported wire type {wire} for field {num}")
        out.setdefault(num, []).append(value)
    return out


# ---- bech32 (BIP-173)

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    return chk


def _hrp_expand(hrp):
    return [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]


def _convertbits(data, frombits, tobits, pad):
    acc = bits = 0
    out = []
    maxv = (1 << tobits) - 1
    for value in data:
        acc = (acc << frombits) | value
        bits += frombits
        while bits >= tobits:
            bits -= tobits
            out.append((acc >> bits) & maxv)
    if pad and bits:
        out.append((acc << (tobits - bits)) & maxv)
    elif not pad and (bits >= frombits or ((acc << (tobits - bits)) & maxv)):
        raise ValueError("invalid bech32 padding")
    return out


def bech32_encode(hrp, data):
    five = _convertbits(data, 8, 5, True)
    polymod = _polymod(_hrp_expand(hrp) + five + [0] * 6) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[d] for d in five + checksum)


def bech32_decode(text):
    """(hrp, raw bytes); ValueError for a bad string or checksum."""
    text = text.lower()
    pos = text.rfind("1")
    if pos < 1 or pos + 7 > len(text):
        raise ValueError(f"not bech32: {text!r}")
    hrp = text[:pos]
    data = [_CHARSET.index(c) for c in text[pos + 1:]]
    if _polymod(_hrp_expand(hrp) + data) != 1:
        raise ValueError(f"bad bech32 checksum: {text!r}")
    return hrp, bytes(_convertbits(data[:-6], 5, 8, False))


def address_of_pubkey(pubkey33, hrp="kairos"):
    """The Cosmos account address of a compressed secp256k1 key: RIPEMD-160(SHA-256(key))."""
    return bech32_encode(hrp, hashlib.new("ripemd160", hashlib.sha256(pubkey33).digest()).digest())


# ---- secp256k1

_P = 2**256 - 2**32 - 977
_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
      0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % _P == 0:
        return None
    if a == b:
        lam = 3 * a[0] * a[0] * pow(2 * a[1], -1, _P) % _P
    else:
        lam = (b[1] - a[1]) * pow(b[0] - a[0], -1, _P) % _P
    x = (lam * lam - a[0] - b[0]) % _P
    return x, (lam * (a[0] - x) - a[1]) % _P


def _mul(k, point=_G):
    result = None
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def pubkey_of(private_key):
    """The 33-byte compressed public key of a 32-byte private key."""
    d = int.from_bytes(private_key, "big")
    if not 0 < d < _N:
        raise ValueError("not a secp256k1 private key")
    x, y = _mul(d)
    return bytes([2 + (y & 1)]) + x.to_bytes(32, "big")


def _rfc6979_k(d, digest):
    x = d.to_bytes(32, "big")
    h = (int.from_bytes(digest, "big") % _N).to_bytes(32, "big")
    v, k = b"\x01" * 32, b"\x00" * 32
    k = hmac.new(k, v + b"\x00" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    k = hmac.new(k, v + b"\x01" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k, v, hashlib.sha256).digest()
        candidate = int.from_bytes(v, "big")
        if 0 < candidate < _N:
            return candidate
        k = hmac.new(k, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()


def sign(private_key, message):
    """64-byte r||s (low-S) ECDSA signature of SHA-256(message)."""
    d = int.from_bytes(private_key, "big")
    digest = hashlib.sha256(message).digest()
    z = int.from_bytes(digest, "big")
    k = _rfc6979_k(d, digest)
    r = _mul(k)[0] % _N
    s = pow(k, -1, _N) * (z + r * d) % _N
    if s > _N // 2:
        s = _N - s
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


# ---- Cosmos messages

MSG_SEND = "/cosmos.bank.v1beta1.MsgSend"
SECP256K1_PUBKEY = "/cosmos.crypto.secp256k1.PubKey"
SIGN_MODE_DIRECT = 1


def coin(denom, amount):
    return field_bytes(1, denom) + field_bytes(2, str(amount))


def parse_coins(text):
    """"1000stake" or "10atom,5stake" -> [(denom, amount)] (as given; keep them sorted)."""
    out = []
    for part in filter(None, text.split(",")):
        i = 0
        while i < len(part) and part[i].isdigit():
            i += 1
        out.append((part[i:], int(part[:i])))
    return out


def any_msg(type_url, value):
    return field_bytes(1, type_url) + field_bytes(2, value)


def msg_send(from_address, to_address, amount):
    return (field_bytes(1, from_address) + field_bytes(2, to_address) +
            b"".join(field_bytes(3, coin(d, a), keep_empty=True) for d, a in parse_coins(amount)))


def timestamp(unix_nanos):
    seconds, nanos = divmod(unix_nanos, 1_000_000_000)
    return field_varint(1, seconds) + field_varint(2, nanos)


def tx_body(messages, memo="", timeout_height=0, unordered=False, timeout_unix_nanos=None):
    body = b"".join(field_bytes(1, m, keep_empty=True) for m in messages)
    body += field_bytes(2, memo) + field_varint(3, timeout_height) + field_varint(4, unordered)
    if timeout_unix_nanos is not None:
        body += field_bytes(5, timestamp(timeout_unix_nanos), keep_empty=True)
    return body


def auth_info(pubkey33, sequence, fee, gas_limit):
    pub_any = any_msg(SECP256K1_PUBKEY, field_bytes(1, pubkey33))
    mode_info = field_bytes(1, field_varint(1, SIGN_MODE_DIRECT), keep_empty=True)
    signer_info = (field_bytes(1, pub_any) + field_bytes(2, mode_info, keep_empty=True) +
                   field_varint(3, sequence))
    fee_msg = (b"".join(field_bytes(1, coin(d, a), keep_empty=True) for d, a in parse_coins(fee)) +
               field_varint(2, gas_limit))
    return field_bytes(1, signer_info, keep_empty=True) + field_bytes(2, fee_msg, keep_empty=True)


def sign_doc(body_bytes, auth_info_bytes, chain_id, account_number):
    return (field_bytes(1, body_bytes) + field_bytes(2, auth_info_bytes) +
            field_bytes(3, chain_id) + field_varint(4, account_number))


def tx_raw(body_bytes, auth_info_bytes, signatures):
    return (field_bytes(1, body_bytes) + field_bytes(2, auth_info_bytes) +
            b"".join(field_bytes(3, s, keep_empty=True) for s in signatures))


def signed_send(private_key, chain_id, account_number, from_address, to_address, amount,
                fee="2000stake", gas_limit=200000, sequence=0, memo="", unordered=False,
                timeout_unix_nanos=None):
    """The TxRaw bytes of a signed MsgSend."""
    pub = pubkey_of(private_key)
    body = tx_body([any_msg(MSG_SEND, msg_send(from_address, to_address, amount))], memo=memo,
                   unordered=unordered, timeout_unix_nanos=timeout_unix_nanos)
    info = auth_info(pub, sequence, fee, gas_limit)
    signature = sign(private_key, sign_doc(body, info, chain_id, account_number))
    return tx_raw(body, info, [signature])


def decode_tx(raw):
    """The fields the tests look at in TxRaw bytes: unordered, timeout (Unix ns or None),
    sequence, memo, from/to/amount of the first message."""
    tx = decode_fields(raw)
    body = decode_fields(tx[1][0])
    info = decode_fields(tx[2][0])
    signer = decode_fields(info[1][0])
    msg = decode_fields(decode_fields(body[1][0])[2][0])
    timeout = None
    if 5 in body:
        ts = decode_fields(body[5][0])
        timeout = ts.get(1, [0])[0] * 1_000_000_000 + ts.get(2, [0])[0]
    amount = [decode_fields(c) for c in msg.get(3, [])]
    return {
        "unordered": bool(body.get(4, [0])[0]),
        "timeout_unix_nanos": timeout,
        "memo": body.get(2, [b""])[0].decode(),
        "sequence": signer.get(3, [0])[0],
        "from": msg[1][0].decode(),
        "to": msg[2][0].decode(),
        "amount": ",".join(c[2][0].decode() + c[1][0].decode() for c in amount),
        "signatures": tx.get(3, []),
    }


# ---- module query requests (the `data` of an ABCI query)

def query_account_request(address):
    return field_bytes(1, address)


def query_balance_request(address, denom):
    return field_bytes(1, address) + field_bytes(2, denom)


def query_unordered_nonce_request(signer, timeout_unix_nanos):
    return field_bytes(1, signer) + field_varint(2, timeout_unix_nanos)


def decode_balance_response(value):
    """QueryBalanceResponse -> (denom, amount as int)."""
    c = decode_fields(decode_fields(value)[1][0])
    return c[1][0].decode(), int(c.get(2, [b"0"])[0].decode())


def decode_account_response(value):
    """QueryAccountResponse -> {"type_url", "address", "pub_key" (bytes or None),
    "account_number", "sequence"}."""
    any_ = decode_fields(decode_fields(value)[1][0])
    acc = decode_fields(any_[2][0])
    pub = None
    if 2 in acc:
        pub = decode_fields(decode_fields(acc[2][0])[2][0])[1][0]
    return {"type_url": any_[1][0].decode(), "address": acc[1][0].decode(), "pub_key": pub,
            "account_number": acc.get(3, [0])[0], "sequence": acc.get(4, [0])[0]}
