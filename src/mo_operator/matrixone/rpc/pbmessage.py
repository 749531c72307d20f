"""Protobuf messages declared as dataclasses with a field table, encoded and decoded from it.

Each message module lists, per class, ``FIELDS``: field number, attribute and kind, generated
from MatrixOne's ``.proto`` files (``tools/gen_morpc_messages.py``). Declaring rather than
hand-writing each encoder keeps the numbers in one place, checked against the source.

gogo-protobuf behaviour we follow (github.com/gogo/protobuf v1.3.2 generated code, as
vendored by MatrixOne):

- proto3 scalars are left out when zero; repeated strings are one field per element.
- a message field marked ``(gogoproto.nullable) = false`` is always written, even empty;
  a nullable one (a Go pointer) only when set, and then even when empty: MatrixOne
  handlers test such pointers for nil, so presence is part of the request.
- a map is a repeated entry message ``{1: key, 2: value}``; gogo always writes both.
- fields we do not declare are skipped, so newer MatrixOne versions decode fine.

Decoding differs from gogo in one corner: a singular message field that occurs twice is
replaced rather than merged (no MatrixOne encoder writes a field twice).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self, cast

from mo_operator.matrixone.rpc.protobuf import (
    FieldValue,
    Writer,
    as_bool,
    as_bytes,
    as_int64,
    as_str,
    as_uint,
    iter_fields,
)


class Kind:
    """How one field's values go to and come from the wire."""

    def default(self) -> Any:
        raise NotImplementedError

    def encode(self, w: Writer, number: int, value: Any) -> None:
        raise NotImplementedError

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> Any:
        """The value in ``raw``: for repeated kinds one element, for maps one ``(key, value)``."""
        raise NotImplementedError


class _Uint(Kind):
    def default(self) -> int:
        return 0

    def encode(self, w: Writer, number: int, value: Any) -> None:
        w.uint(number, int(value))

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> int:
        return as_uint(number, wire_type, raw)


class _Int64(_Uint):
    def decode(self, number: int, wire_type: int, raw: FieldValue) -> int:
        return as_int64(number, wire_type, raw)


class _Bool(Kind):
    def default(self) -> bool:
        return False

    def encode(self, w: Writer, number: int, value: Any) -> None:
        w.uint(number, 1 if value else 0)

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> bool:
        return as_bool(number, wire_type, raw)


class _String(Kind):
    def default(self) -> str:
        return ""

    def encode(self, w: Writer, number: int, value: Any) -> None:
        w.string(number, value)

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> str:
        return as_str(number, wire_type, raw)


class _Bytes(Kind):
    def default(self) -> bytes:
        return b""

    def encode(self, w: Writer, number: int, value: Any) -> None:
        w.bytes_field(number, value)

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> bytes:
        return as_bytes(number, wire_type, raw)


class _GoTime(Kind):
    """A ``google.protobuf.Timestamp`` with ``(gogoproto.stdtime)``, non-nullable: a Go
    ``time.Time``, whose zero value (year 1) gogo writes as ``{Seconds: -62135596800}``.
    Held as its seconds (the operator sends only the zero time)."""

    def default(self) -> int:
        return GO_ZERO_SECONDS

    def encode(self, w: Writer, number: int, value: Any) -> None:
        w.message(number, Writer().uint(1, int(value)).getvalue())

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> int:
        seconds = 0
        for n, wt, v in iter_fields(as_bytes(number, wire_type, raw)):
            if n == 1:
                seconds = as_int64(n, wt, v)
        return seconds


GO_ZERO_SECONDS = -62135596800
"""Go's zero ``time.Time`` (0001-01-01T00:00:00Z) in seconds since the Unix epoch."""

UINT: Kind = _Uint()
"""``uint64``, ``uint32`` and enums."""
INT64: Kind = _Int64()
BOOL: Kind = _Bool()
STRING: Kind = _String()
BYTES: Kind = _Bytes()
GO_TIME: Kind = _GoTime()


class Msg(Kind):
    """A nested message; ``nullable=False`` for gogo non-nullable fields (always present)."""

    def __init__(self, cls: type[Message], *, nullable: bool = True) -> None:
        self.cls = cls
        self.nullable = nullable

    def default(self) -> Message | None:
        return None if self.nullable else self.cls()

    def encode(self, w: Writer, number: int, value: Any) -> None:
        if value is not None:
            w.message(number, value.encode())

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> Message:
        return self.cls.decode(as_bytes(number, wire_type, raw))


class Repeated(Kind):
    """A repeated string or message field, held as a tuple."""

    def __init__(self, item: Kind) -> None:
        self.item = item

    def default(self) -> tuple[Any, ...]:
        return ()

    def encode(self, w: Writer, number: int, value: Any) -> None:
        for item in value:
            if isinstance(self.item, Msg):
                w.message(number, item.encode())
            elif self.item is BYTES:
                w.bytes_field(number, item, always=True)
            else:
                w.string(number, item, always=True)

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> Any:
        """One element (``Message.decode`` collects them)."""
        return self.item.decode(number, wire_type, raw)


class MapOf(Kind):
    """``map<K, V>``: a dict of messages or strings; entries are written in key order (gogo's
    order is the map's)."""

    def __init__(self, key: Kind, value: Kind) -> None:
        self.key = key
        self.value = value

    def default(self) -> dict[Any, Any]:
        return {}

    def encode(self, w: Writer, number: int, value: Any) -> None:
        for k in sorted(value):
            entry = Writer()
            if self.key is STRING:
                entry.string(1, k, always=True)
            else:
                entry.uint(1, k)
            if isinstance(self.value, Msg):
                entry.message(2, value[k].encode())
            else:
                entry.string(2, value[k], always=True)
            w.message(number, entry.getvalue())

    def decode(self, number: int, wire_type: int, raw: FieldValue) -> tuple[Any, Any]:
        """One ``(key, value)`` entry (``Message.decode`` collects them; a missing part is its zero)."""
        key = self.key.default()
        item = self.value.cls() if isinstance(self.value, Msg) else self.value.default()
        for n, wt, v in iter_fields(as_bytes(number, wire_type, raw)):
            if n == 1:
                key = self.key.decode(n, wt, v)
            elif n == 2:
                item = self.value.decode(n, wt, v)
        return key, item


@dataclass(frozen=True)
class F:
    """One declared field: its number in the ``.proto``, our attribute name, its kind."""

    number: int
    name: str
    kind: Kind


class Message:
    """Base of the message dataclasses: ``FIELDS`` drives ``encode`` and ``decode``."""

    FIELDS: ClassVar[tuple[F, ...]] = ()
    _BY_NUMBER: ClassVar[Mapping[int, F]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._BY_NUMBER = {f.number: f for f in cls.FIELDS}

    def encode(self) -> bytes:
        w = Writer()
        for f in self.FIELDS:
            f.kind.encode(w, f.number, getattr(self, f.name))
        return w.getvalue()

    @classmethod
    def decode(cls, data: bytes) -> Self:
        """The message in ``data``; raises ``DecodeError`` on malformed input."""
        values: dict[str, Any] = {}
        lists: dict[str, list[Any]] = {}
        maps: dict[str, dict[Any, Any]] = {}
        for number, wire_type, raw in iter_fields(data):
            spec = cls._BY_NUMBER.get(number)
            if spec is None:
                continue
            value = spec.kind.decode(number, wire_type, raw)
            if isinstance(spec.kind, Repeated):
                lists.setdefault(spec.name, []).append(value)
            elif isinstance(spec.kind, MapOf):
                maps.setdefault(spec.name, {})[value[0]] = value[1]
            else:
                values[spec.name] = value
        values.update({name: tuple(items) for name, items in lists.items()})
        values.update(maps)
        return cls(**values)


def check_fields(cls: type[Message]) -> None:
    """Assert that ``cls.FIELDS`` names dataclass attributes (used by the tests)."""
    names = {f.name for f in fields(cast(Any, cls))}
    missing = [f.name for f in cls.FIELDS if f.name not in names]
    if missing:
        raise AssertionError(f"{cls.__name__}.FIELDS names unknown attributes {missing}")
