"""Fast JSON encoding and deep copies for stored objects.

Stored objects are never mutated once written; every handler works on a
clone. msgspec (already a dependency of lightkube) encodes several times
faster than the stdlib, which matters when one write fans out to many
watchers.
"""

from __future__ import annotations

from typing import Any

import msgspec

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def dumps(obj: Any) -> bytes:
    return _encoder.encode(obj)


def loads(data: bytes | str) -> Any:
    return _decoder.decode(data)


def clone(obj: Any) -> Any:
    """A deep copy of a JSON value (faster than copy.deepcopy for JSON)."""
    return _decoder.decode(_encoder.encode(obj))
