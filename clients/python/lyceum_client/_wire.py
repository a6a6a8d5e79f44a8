"""Bytes on the wire: 7/MDP client frames, the contract's JSON envelope, the broker's rejection
frame, and CURVE on a socket. Pure functions, shared by the requester and the event subscriber."""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence, Union

import zmq
import zmq.auth

from .errors import ProtocolError, error_for

MDP_CLIENT = b"MDPC01"
_REJECTION = b"\x00MDP-ERROR "
#: The broker forwards frames up to this size (protocol/majordomo.md, maxFrameSize).
MAX_FRAME_BYTES = 4 * 1024 * 1024

PathLike = Union[str, "os.PathLike[str]"]


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The request frame: compact UTF-8 JSON, Unicode sent as itself."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request_frames(tag: bytes, service: bytes, frame: bytes) -> list[bytes]:
    """A REQUEST as a DEALER sends it, behind one envelope frame (``tag``) that the broker
    returns in front of the REPLY (protocol/majordomo.md, "Client envelopes")."""
    return [tag, b"", MDP_CLIENT, service, frame]


def split_reply(frames: Sequence[bytes]) -> Optional[tuple[bytes, bytes, list[bytes]]]:
    """``(tag, service, body)`` of a REPLY with one envelope frame, or ``None`` for anything else
    (which the client drops: a hostile or confused peer must not fail a request)."""
    if len(frames) < 5 or frames[1] != b"" or frames[2] != MDP_CLIENT:
        return None
    return frames[0], frames[3], list(frames[4:])


def decode_result(service: str, body: Sequence[bytes]) -> Any:
    """The ``result`` of a reply body, or raises the error it carries: a broker rejection or the
    contract's ``{"ok": false, "error": …}``."""
    if len(body) != 1:
        raise ProtocolError(f"a reply of {len(body)} frames, not one", service=service)
    frame = body[0]
    if frame.startswith(_REJECTION):
        code, _, text = frame[len(_REJECTION):].partition(b" ")
        raise error_for(code.decode("ascii", "replace"), text.decode("utf-8", "replace"), service=service)
    try:
        reply = json.loads(frame.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as problem:
        raise ProtocolError(f"a reply that is not UTF-8 JSON: {problem}", service=service) from None
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise ProtocolError("a reply without a boolean 'ok'", service=service)
    if reply["ok"]:
        return reply.get("result")
    error = reply.get("error")
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        raise ProtocolError("an error reply without a code", service=service)
    field = error.get("field")
    raise error_for(error["code"], str(error.get("message", "")),
                    field=field if isinstance(field, str) else None, service=service)


class Curve:
    """CURVE keys for a client socket, read once from zcert files: the client's secret
    certificate and the server's public one. Either both or neither must be given."""

    def __init__(self, certificate: PathLike, server_certificate: PathLike) -> None:
        self.public, secret = zmq.auth.load_certificate(certificate)
        if secret is None:
            raise ValueError(f"{os.fspath(certificate)} holds no secret key (give the client's secret certificate)")
        self.secret: bytes = secret
        self.server, _ = zmq.auth.load_certificate(server_certificate)

    @staticmethod
    def from_options(certificate: Optional[PathLike], server_certificate: Optional[PathLike]) -> Optional[Curve]:
        """The keys when both paths are given, ``None`` when neither is."""
        if certificate is None and server_certificate is None:
            return None
        if certificate is None or server_certificate is None:
            raise ValueError("CURVE needs both curve_certificate= and server_certificate=")
        return Curve(certificate, server_certificate)

    def apply(self, socket: zmq.Socket[Any], server_key: Optional[bytes] = None) -> None:
        """Makes ``socket`` a CURVE client of the server, or of the one whose public key is
        ``server_key`` (Z85) when given; call before connecting."""
        socket.curve_publickey = self.public
        socket.curve_secretkey = self.secret
        socket.curve_serverkey = server_key or self.server
