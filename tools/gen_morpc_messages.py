"""Generate the morpc message tables of ``src/mo_operator/matrixone/rpc``
(``logservice_pb.py``, ``query_pb.py``, ``lock_pb.py``) from MatrixOne's
``.proto`` files at one commit.

Why generated: a field's number, its wire type, whether gogo-protobuf writes
it always (``(gogoproto.nullable) = false``) and how (``stdtime``) are facts
of MatrixOne's source; copying them by hand is how one wrong byte gets in.
What is ours is only the choice of messages and fields (``MODULES``): the
fields the operator sends or reads. For every message reachable from a
request the operator sends, each field gogo always writes (a non-nullable
message field, recursively) is added, so that what we encode is byte for byte
what MatrixOne's Go client encodes (``tests/integration/mo_peer`` compares
them). Fields a table leaves out are skipped when decoding.

Usage (a bare clone is enough)::

    git clone --bare https://github.com/matrixorigin/matrixone.git /tmp/matrixone.git
    .venv/bin/python tools/gen_morpc_messages.py --git /tmp/matrixone.git \\
        --commit 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e

``--check`` compares instead of writing (exit 1 when a module differs).
"""

from __future__ import annotations

import argparse
import keyword
import re
import subprocess
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/mo_operator/matrixone/rpc"

SCALARS = {
    "uint64": "UINT",
    "uint32": "UINT",
    "int64": "INT64",
    "int32": "INT64",
    "bool": "BOOL",
    "string": "STRING",
    "bytes": "BYTES",
}
GO_ZERO_TIME = "google.protobuf.Timestamp"
"""With ``stdtime`` and non-nullable, a Go ``time.Time``: its zero value is written."""


@dataclass(frozen=True)
class Spec:
    """One field or message of the selection: the fields to keep, ``send`` for messages
    the operator encodes (every field gogo always writes is then added)."""

    fields: tuple[str, ...]
    send: bool = False


@dataclass(frozen=True)
class Module:
    name: str
    doc: str
    messages: dict[str, Spec]
    enums: tuple[str, ...]
    renames: dict[str, str] = field(default_factory=dict)


MODULES = (
    Module(
        "logservice_pb",
        "The log service messages the HAKeeper client exchanges.",
        {
            "logservice.Request": Spec(
                (
                    "RequestID",
                    "Method",
                    "LogRequest",
                    "CNStoreLabel",
                    "CNWorkState",
                    "CNStateLabel",
                    "DeleteCNStore",
                ),
                send=True,
            ),
            "logservice.LogRequest": Spec(
                ("Name", "ShardID", "IncludeExpiredReplicaAddresses", "ExcludeHardDownReplicaAddresses")
            ),
            "logservice.CNStoreLabel": Spec(("UUID", "Operation", "Labels")),
            "logservice.CNWorkState": Spec(("UUID", "State")),
            "logservice.CNStateLabel": Spec(("UUID", "State", "Labels")),
            "logservice.DeleteCNStore": Spec(("StoreID",)),
            "metadata.LabelList": Spec(("Labels",)),
            "logservice.Response": Spec(
                (
                    "RequestID",
                    "Method",
                    "ErrorCode",
                    "ErrorMessage",
                    "IsHAKeeper",
                    "LogResponse",
                    "ClusterDetails",
                    "ShardInfo",
                    "CheckerState",
                )
            ),
            "logservice.LogResponse": Spec(("ShardID", "Lsn", "LastLsn", "LeaderID")),
            "logservice.ClusterDetails": Spec(("TNStores", "CNStores", "LogStores")),
            "logservice.CNStore": Spec(
                (
                    "UUID",
                    "ServiceAddress",
                    "SQLAddress",
                    "LockServiceAddress",
                    "Role",
                    "Tick",
                    "State",
                    "Labels",
                    "WorkState",
                    "QueryAddress",
                    "UpTime",
                )
            ),
            "logservice.TNStore": Spec(
                (
                    "UUID",
                    "ServiceAddress",
                    "Tick",
                    "State",
                    "LogtailServerAddress",
                    "LockServiceAddress",
                    "QueryAddress",
                )
            ),
            "logservice.LogStore": Spec(("UUID", "ServiceAddress", "Tick", "State")),
            "logservice.ShardInfoQueryResult": Spec(("ShardID", "Replicas", "Epoch", "LeaderID", "Term")),
            "logservice.ReplicaInfo": Spec(("UUID", "ServiceAddress")),
            "logservice.CheckerState": Spec(("Tick", "LogState", "State")),
            "logservice.LogState": Spec(("Shards",)),
            "logservice.LogShardInfo": Spec(("ShardID", "Replicas", "Epoch", "NonVotingReplicas")),
        },
        (
            "logservice.MethodType",
            "logservice.HAKeeperState",
            "logservice.NodeState",
            "metadata.WorkState",
            "metadata.CNRole",
        ),
    ),
    Module(
        "query_pb",
        "The CN query service messages the operator exchanges.",
        {
            "query.Request": Spec(
                (
                    "RequestID",
                    "CmdMethod",
                    "ShowProcessListRequest",
                    "GetPipelineInfoRequest",
                    "GetReplicaCount",
                ),
                send=True,
            ),
            "query.ShowProcessListRequest": Spec(("Tenant", "SysTenant")),
            "query.GetPipelineInfoRequest": Spec(()),
            "query.GetReplicaCountRequest": Spec(("CN",)),
            "query.Response": Spec(
                (
                    "RequestID",
                    "CmdMethod",
                    "Error",
                    "ShowProcessListResponse",
                    "GetPipelineInfoResponse",
                    "GetReplicaCount",
                )
            ),
            "query.ShowProcessListResponse": Spec(("Sessions",)),
            "query.GetPipelineInfoResponse": Spec(("Count",)),
            "query.GetReplicaCountResponse": Spec(("Count",)),
            "status.Session": Spec(("NodeID", "ConnID", "SessionID", "Account", "User", "FromProxy")),
            "moerr.Error": Spec(("code", "mysql_code", "message", "sql_state")),
        },
        ("query.CmdMethod",),
        {"moerr.Error": "MOError"},
    ),
    Module(
        "lock_pb",
        "The TN lock service messages the operator exchanges.",
        {
            "lock.Request": Spec(
                ("RequestID", "Method", "SetRestartService", "CanRestartService", "RemainTxnInService"),
                send=True,
            ),
            "lock.SetRestartServiceRequest": Spec(("ServiceID",)),
            "lock.CanRestartServiceRequest": Spec(("ServiceID",)),
            "lock.RemainTxnInServiceRequest": Spec(("ServiceID",)),
            "lock.Response": Spec(
                (
                    "RequestID",
                    "Method",
                    "Error",
                    "SetRestartService",
                    "CanRestartService",
                    "RemainTxnInService",
                )
            ),
            "lock.SetRestartServiceResponse": Spec(("OK",)),
            "lock.CanRestartServiceResponse": Spec(("OK",)),
            "lock.RemainTxnInServiceResponse": Spec(("RemainTxn",)),
        },
        ("lock.Method",),
    ),
)


# ---------------------------------------------------------------------- parsing
@dataclass
class ProtoField:
    name: str
    number: int
    type: str
    label: str  # "", "repeated" or "map"
    key: str = ""
    nullable: bool = True
    stdtime: bool = False
    custom: bool = False


@dataclass
class ProtoMessage:
    full: str
    fields: dict[str, ProtoField]


@dataclass
class ProtoEnum:
    full: str
    values: list[tuple[str, int]]


class Sources:
    """The .proto files of one MatrixOne commit, parsed as types are asked for."""

    def __init__(self, git_dir: str, commit: str) -> None:
        self.git_dir = git_dir
        self.commit = commit
        self.messages: dict[str, ProtoMessage] = {}
        self.enums: dict[str, ProtoEnum] = {}
        self.files: dict[str, str] = {}
        """proto file → the package it declares (files parsed so far)."""

    def read(self, path: str) -> str:
        out = subprocess.run(
            ["git", "--git-dir", self.git_dir, "show", f"{self.commit}:proto/{path}"],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout

    def package_file(self, package: str) -> str:
        return {"google.protobuf": ""}.get(package, f"{package}.proto")

    def load(self, package: str) -> None:
        path = self.package_file(package)
        if not path or path in self.files:
            return
        text = _strip_comments(self.read(path))
        declared = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
        if declared is None or declared.group(1) != package:
            raise SystemExit(f"proto/{path} does not declare package {package}")
        self.files[path] = package
        _parse_body(text, package, package, self)

    def message(self, full: str) -> ProtoMessage:
        self.load(full.rsplit(".", 1)[0])
        if full not in self.messages:
            raise SystemExit(f"no message {full} at {self.commit}")
        return self.messages[full]

    def enum(self, full: str) -> ProtoEnum:
        self.load(full.rsplit(".", 1)[0])
        if full not in self.enums:
            raise SystemExit(f"no enum {full} at {self.commit}")
        return self.enums[full]

    def resolve(self, package: str, name: str) -> str:
        """The full name of type ``name`` used in ``package`` (scalar names unchanged)."""
        if name in SCALARS or name == GO_ZERO_TIME:
            return name
        full = name if "." in name else f"{package}.{name}"
        return full


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


FIELD = re.compile(
    r"^(?:(repeated)\s+)?(?:map\s*<\s*([\w.]+)\s*,\s*([\w.]+)\s*>|([\w.]+))\s+(\w+)\s*=\s*(\d+)\s*(\[[^\]]*\])?$"
)


def _parse_body(text: str, scope: str, package: str, sources: Sources) -> None:
    """Register the messages and enums declared in ``text`` (a file or a message body)."""
    i = 0
    while True:
        found = re.compile(r"\b(message|enum)\s+(\w+)\s*\{").search(text, i)
        if found is None:
            return
        start = found.end()
        depth, j = 1, start
        while depth:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
            j += 1
        body = text[start : j - 1]
        full = f"{scope}.{found.group(2)}"
        if found.group(1) == "enum":
            values = [(m.group(1), int(m.group(2))) for m in re.finditer(r"(\w+)\s*=\s*(-?\d+)", body)]
            sources.enums[full] = ProtoEnum(full, values)
        else:
            _parse_body(body, full, package, sources)  # nested declarations
            flat = re.sub(r"\b(message|enum|oneof)\s+\w+\s*\{[^{}]*\}", "", body)
            fields: dict[str, ProtoField] = {}
            for statement in flat.split(";"):
                statement = " ".join(statement.split())
                if not statement or statement.startswith(("option", "reserved")):
                    continue
                m = FIELD.match(statement)
                if m is None:
                    raise SystemExit(f"cannot read field {statement!r} of {full}")
                repeated, key, value, plain, name, number, options = m.groups()
                options = options or ""
                type_name = value if key else plain
                fields[name] = ProtoField(
                    name=name,
                    number=int(number),
                    type=sources.resolve(package, type_name),
                    label="map" if key else ("repeated" if repeated else ""),
                    key=key or "",
                    nullable=not re.search(r"\(gogoproto\.nullable\)\s*=\s*false", options),
                    stdtime=bool(re.search(r"\(gogoproto\.stdtime\)\s*=\s*true", options)),
                    custom=bool(re.search(r"\(gogoproto\.customtype\)", options)),
                )
            sources.messages[full] = ProtoMessage(full, fields)
        i = j


# ------------------------------------------------------------------- selection
def snake(name: str) -> str:
    """``RequestID`` → ``request_id``, ``CNStateLabel`` → ``cn_state_label``."""
    out = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
    return out + "_" if keyword.iskeyword(out) else out


@dataclass
class Chosen:
    """The fields of one generated message."""

    message: ProtoMessage
    fields: list[ProtoField]


def choose(module: Module, sources: Sources) -> dict[str, Chosen]:
    """Every message of the module with the fields it keeps (see the module doc): the
    fields ``MODULES`` names, and in the messages the operator sends (reachable from a
    ``send`` root), every field gogo always writes; messages they refer to follow."""

    def wanted(name: str, send: bool) -> set[str]:
        message = sources.message(name)
        names = set(module.messages.get(name, Spec(())).fields)
        unknown = names - set(message.fields)
        if unknown:
            raise SystemExit(f"{name} has no field {sorted(unknown)}")
        if send:
            names |= {f.name for f in message.fields.values() if _always_written(f)}
        return names

    sent: set[str] = set()
    roots = [name for name, spec in module.messages.items() if spec.send]
    queue: deque[str] = deque(roots)
    while queue:  # the messages the operator encodes
        name = queue.popleft()
        if name in sent:
            continue
        sent.add(name)
        queue.extend(
            t for t in _referred(sources.message(name), wanted(name, True), sources) if t not in sent
        )
    chosen: dict[str, Chosen] = {}
    queue = deque(module.messages)
    while queue:
        name = queue.popleft()
        if name in chosen:
            continue
        message = sources.message(name)
        names = wanted(name, name in sent)
        fields = sorted((message.fields[n] for n in names), key=lambda f: f.number)
        for f in fields:
            if f.custom:
                raise SystemExit(f"{name}.{f.name} has a gogoproto customtype, which no table here encodes")
        chosen[name] = Chosen(message, fields)
        queue.extend(t for t in _referred(message, names, sources) if t not in chosen)
    return chosen


def _referred(message: ProtoMessage, names: set[str], sources: Sources) -> list[str]:
    """The message types the fields ``names`` of ``message`` hold."""
    found = []
    for name in sorted(names):
        target = message.fields[name].type
        if target in SCALARS or target == GO_ZERO_TIME:
            continue
        sources.load(target.rsplit(".", 1)[0])
        if target in sources.messages:
            found.append(target)
    return found


def _always_written(f: ProtoField) -> bool:
    """gogo writes a singular non-nullable message field even when it is empty."""
    return f.label == "" and not f.nullable and f.type not in SCALARS


# -------------------------------------------------------------------- writing
def _kind(f: ProtoField, classes: dict[str, str], sources: Sources) -> str:
    if f.type == GO_ZERO_TIME:
        if not f.stdtime or f.nullable:
            raise SystemExit(f"{f.name}: a Timestamp that is not a non-nullable stdtime")
        return "GO_TIME"
    if f.type in SCALARS:
        item = SCALARS[f.type]
    elif f.type in sources.enums:
        item = "UINT"
    else:
        item = f"Msg({classes[f.type]}{'' if f.nullable else ', nullable=False'})"
    if f.label == "map":
        if not item.startswith("Msg(") and item != "STRING":
            raise SystemExit(f"{f.name}: a map of {f.type}, which no table here encodes")
        return f"MapOf({SCALARS[f.key]}, {item})"
    if f.label == "repeated":
        return f"Repeated({item})"
    return item


def _annotation(f: ProtoField, classes: dict[str, str], sources: Sources) -> tuple[str, str]:
    """The attribute's type and default."""
    if f.type == GO_ZERO_TIME:
        return "int", "GO_ZERO_SECONDS"
    if f.type in SCALARS or f.type in sources.enums:
        py = {"UINT": "int", "INT64": "int", "BOOL": "bool", "STRING": "str", "BYTES": "bytes"}[
            SCALARS.get(f.type, "UINT")
        ]
        default = {"int": "0", "bool": "False", "str": '""', "bytes": 'b""'}[py]
    else:
        py, default = classes[f.type], ""
    if f.label == "map":
        return f"dict[{'str' if f.key == 'string' else 'int'}, {py}]", "field(default_factory=dict)"
    if f.label == "repeated":
        return f"tuple[{py}, ...]", "()"
    if default:
        return py, default
    if f.nullable:
        return f"{py} | None", "None"
    return py, f"field(default_factory={py})"


def render(module: Module, sources: Sources) -> str:
    chosen = choose(module, sources)
    classes = {name: module.renames.get(name, name.rsplit(".", 1)[1]) for name in chosen}
    if len(set(classes.values())) != len(classes):
        raise SystemExit(f"{module.name}: two messages of one name; rename one in MODULES")
    order = _dependency_order(chosen)
    lines: list[str] = []
    used = sorted({p for name in [*chosen, *module.enums] for p in [name.rsplit(".", 1)[0]]})
    cited = ", ".join(f"``proto/{sources.package_file(p)}``" for p in used)
    lines += [
        f'"""{module.doc}',
        "",
        "GENERATED by tools/gen_morpc_messages.py from MatrixOne's .proto files; do not edit by",
        "hand, re-run the script. Source: matrixorigin/matrixone at",
        f"{sources.commit}, {cited}.",
        "",
        "Each message keeps the fields the operator sends or reads, and, in what it sends, every",
        "field gogo-protobuf always writes (non-nullable messages), so its bytes are MatrixOne's.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import enum",
        "from dataclasses import dataclass, field",
        "",
        "from mo_operator.matrixone.rpc.pbmessage import IMPORTS",
        "",
        f'SOURCE_COMMIT = "{sources.commit}"',
    ]
    for name in module.enums:
        proto_enum = sources.enum(name)
        lines += ["", "", f"class {name.rsplit('.', 1)[1]}(enum.IntEnum):", f'    """``{name}``."""', ""]
        lines += [f"    {value} = {number}" for value, number in proto_enum.values]
    for name in order:
        item = chosen[name]
        lines += [
            "",
            "",
            "@dataclass(frozen=True)",
            f"class {classes[name]}(Message):",
            f'    """``{name}``."""',
        ]
        if item.fields:
            lines.append("")
        for f in item.fields:
            py, default = _annotation(f, classes, sources)
            lines.append(f"    {snake(f.name)}: {py} = {default}")
        if item.fields:
            lines.append("    FIELDS = (")
            for f in item.fields:
                lines.append(f'        F({f.number}, "{snake(f.name)}", {_kind(f, classes, sources)}),')
            lines.append("    )")
    text = "\n".join(lines) + "\n"
    names = [
        "BOOL",
        "BYTES",
        "GO_TIME",
        "GO_ZERO_SECONDS",
        "INT64",
        "STRING",
        "UINT",
        "F",
        "MapOf",
        "Message",
    ]
    names += ["Msg", "Repeated"]
    used = [n for n in names if re.search(rf"\b{n}\b", text.split("IMPORTS", 1)[1])]
    return text.replace("IMPORTS", ", ".join(used))


def _dependency_order(chosen: dict[str, Chosen]) -> list[str]:
    """Messages before those that refer to them (the classes are evaluated in order)."""
    done: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for f in chosen[name].fields:
            if f.type in chosen:
                visit(f.type)
        done.append(name)

    for name in sorted(chosen):
        visit(name)
    return done


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--git", required=True, help="a clone (bare is enough) of matrixorigin/matrixone")
    parser.add_argument("--commit", required=True, help="the commit whose .proto files to read (full hash)")
    parser.add_argument(
        "--check", action="store_true", help="compare with the committed modules; write nothing"
    )
    args = parser.parse_args()
    sources = Sources(args.git, args.commit)
    stale = []
    for module in MODULES:
        text = render(module, sources)
        target = OUT / f"{module.name}.py"
        formatted = subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(target), "-"],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        if args.check:
            if not target.exists() or target.read_text() != formatted:
                stale.append(target.name)
        else:
            target.write_text(formatted)
            print(target)
    for name in stale:
        print(f"{name} differs from what MatrixOne's .proto files at {args.commit} generate", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
