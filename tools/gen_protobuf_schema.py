"""Generate ``devkit/src/mo_devkit/localcluster/apiserver/protobuf/schema.py``, the
table the embedded API server uses to decode Kubernetes protobuf request
bodies (``application/vnd.kubernetes.protobuf``) into JSON objects.

Why generated: the wire layout of every message (field numbers, proto types,
repeated and map fields) is defined by the ``generated.proto`` files of
k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver, and the
JSON shape of the same objects by the Go structs they were generated from
(``json`` tags: names that differ from the proto names such as ``$ref`` or
``x-kubernetes-*``, embedded structs whose fields are inlined such as
``Volume.VolumeSource``, ``omitempty``, and pointers, which are the only fields
whose zero value is distinguishable from "unset"). Both are read here from the
real sources at one release, and only the messages reachable from the kinds
the server serves are kept.

Usage (bare clones are enough; the three repositories share release tags)::

    git clone --bare https://github.com/kubernetes/api.git /tmp/k8s-api.git
    git clone --bare https://github.com/kubernetes/apimachinery.git /tmp/k8s-apimachinery.git
    git clone --bare https://github.com/kubernetes/apiextensions-apiserver.git /tmp/k8s-apiext.git
    .venv/bin/python tools/gen_protobuf_schema.py --ref v0.37.0-beta.0 \\
        --api /tmp/k8s-api.git --apimachinery /tmp/k8s-apimachinery.git \\
        --apiextensions /tmp/k8s-apiext.git

The built-in kinds come from ``builtins.BUILTIN_RESOURCE_TYPES``, so adding a
kind there and re-running this script is all a new kind needs.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "devkit/src/mo_devkit/localcluster/apiserver/protobuf/schema.py"

SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"}

# Messages whose JSON form is written by a custom MarshalJSON in Go: the
# decoder converts them by field number with the named codec, so their Go
# structs are not consulted. (metav1.Duration would need one too; no served kind
# reaches it, and the generator stops on it, an embedded scalar, if one ever does.)
SPECIAL = {
    "meta.v1.Time": "time",
    "meta.v1.MicroTime": "microtime",
    "meta.v1.FieldsV1": "rawjson",
    "runtime.RawExtension": "rawjson",
    "resource.Quantity": "quantity",
    "intstr.IntOrString": "intorstring",
    "apiextensions.v1.JSON": "rawjson",
    "apiextensions.v1.JSONSchemaPropsOrArray": "schema_or_array",
    "apiextensions.v1.JSONSchemaPropsOrBool": "schema_or_bool",
    "apiextensions.v1.JSONSchemaPropsOrStringArray": "schema_or_string_array",
}

# API group -> (repository key, directory of its versions in that repository).
GROUP_DIRS = {
    "": ("api", "core"),
    "apps": ("api", "apps"),
    "batch": ("api", "batch"),
    "policy": ("api", "policy"),
    "autoscaling": ("api", "autoscaling"),
    "events.k8s.io": ("api", "events"),
    "storage.k8s.io": ("api", "storage"),
    "coordination.k8s.io": ("api", "coordination"),
    "rbac.authorization.k8s.io": ("api", "rbac"),
    "admissionregistration.k8s.io": ("api", "admissionregistration"),
    "apiextensions.k8s.io": ("apiextensions", "pkg/apis/apiextensions"),
}

# Bodies that are not one of the served kinds but are written to them:
# pods/binding (Binding), the scale subresource (autoscaling/v1 Scale).
EXTRA_KINDS = (("v1", "Binding"), ("autoscaling/v1", "Scale"))
# Accepted under every group version, as kube-apiserver registers it in each.
DELETE_OPTIONS = "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"
ENVELOPE = "k8s.io.apimachinery.pkg.runtime.Unknown"

_ALIAS_PREFIXES = (
    "k8s.io.api.",
    "k8s.io.apimachinery.pkg.apis.",
    "k8s.io.apimachinery.pkg.api.",
    "k8s.io.apimachinery.pkg.util.",
    "k8s.io.apimachinery.pkg.",
    "k8s.io.apiextensions_apiserver.pkg.apis.",
)


def alias(full_name: str) -> str:
    """Short table name of a message: ``k8s.io.api.core.v1.Pod`` -> ``core.v1.Pod``."""
    for prefix in _ALIAS_PREFIXES:
        if full_name.startswith(prefix):
            return full_name[len(prefix) :]
    raise SystemExit(f"no alias rule for {full_name}")


@dataclass
class ProtoField:
    number: int
    name: str
    label: str  # "" (optional), "rep" or "map"
    type: str  # scalar name or full message name (map: the value type)


@dataclass
class ProtoMessage:
    full_name: str
    package: str
    go_package: str
    fields: list[ProtoField] = field(default_factory=list)


@dataclass
class GoField:
    go_name: str
    go_type: str
    anonymous: bool
    json_name: str | None  # None: no json tag
    json_options: tuple[str, ...]


class Sources:
    """Reads files at one ref of the three repositories (bare or not)."""

    def __init__(self, repos: dict[str, Path], ref: str) -> None:
        self.repos = repos
        self.ref = ref
        self.commits = {k: self._git(k, "rev-parse", f"{ref}^{{commit}}").strip() for k in repos}

    def _git(self, repo: str, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.repos[repo]), *args], check=True, capture_output=True, text=True
        ).stdout

    def read(self, repo: str, path: str) -> str:
        return self._git(repo, "show", f"{self.commits[repo]}:{path}")

    def list_dir(self, repo: str, path: str) -> list[str]:
        out = self._git(repo, "ls-tree", "--name-only", self.commits[repo], path.rstrip("/") + "/")
        return out.split()

    def locate(self, go_import: str) -> tuple[str, str]:
        """Repository key and directory of a Go import path (k8s.io/api/core/v1)."""
        for prefix, key in (
            ("k8s.io/apimachinery/", "apimachinery"),
            ("k8s.io/apiextensions-apiserver/", "apiextensions"),
            ("k8s.io/api/", "api"),
        ):
            if go_import.startswith(prefix):
                return key, go_import[len(prefix) :]
        raise SystemExit(f"unknown Go import path {go_import}")


_FIELD_RE = re.compile(r"^(optional|repeated)\s+(\S+)\s+(\w+)\s*=\s*(\d+)\s*;$")
_MAP_RE = re.compile(r"^map<\s*(\S+)\s*,\s*(\S+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;$")


def parse_proto(text: str) -> tuple[str, str, list[str], list[ProtoMessage]]:
    """(package, go_package, imports, messages) of a generated.proto file."""
    lines = [re.sub(r"//.*", "", ln).strip() for ln in text.splitlines()]
    text = re.sub(r"/\*.*?\*/", "", "\n".join(lines), flags=re.S)
    package = re.search(r"^package\s+([\w.]+);", text, re.M)
    go_package = re.search(r'^option go_package\s*=\s*"([^"]+)";', text, re.M)
    if not package or not go_package:
        raise SystemExit("proto file without package or go_package")
    imports = re.findall(r'^import\s+"([^"]+)";', text, re.M)
    pkg = package.group(1)
    messages = []
    current: ProtoMessage | None = None
    for ln in text.splitlines():
        if not ln:
            continue
        m = re.match(r"^message\s+(\w+)\s*\{$", ln)
        if m:
            if current is not None:
                raise SystemExit(f"nested message in {current.full_name}")
            current = ProtoMessage(f"{package.group(1)}.{m.group(1)}", package.group(1), go_package.group(1))
            continue
        if current is None:
            continue
        if ln == "}":
            messages.append(current)
            current = None
            continue
        fm, mm = _FIELD_RE.match(ln), _MAP_RE.match(ln)
        if fm:
            label = "rep" if fm.group(1) == "repeated" else ""
            current.fields.append(ProtoField(int(fm.group(4)), fm.group(3), label, resolve(fm.group(2), pkg)))
        elif mm:
            if mm.group(1) != "string":
                raise SystemExit(f"map with {mm.group(1)} keys in {current.full_name}")
            current.fields.append(ProtoField(int(mm.group(4)), mm.group(3), "map", resolve(mm.group(2), pkg)))
        else:
            raise SystemExit(f"unparsed line in {current.full_name}: {ln!r}")
    return package.group(1), go_package.group(1), imports, messages


def q(text: str) -> str:
    """A double-quoted Python literal, as ruff format writes it."""
    return json.dumps(text)


def resolve(type_name: str, package: str) -> str:
    if type_name in SCALARS:
        return type_name
    if type_name.startswith("."):
        return type_name[1:]
    if "." in type_name:  # Kubernetes < 1.31 wrote full names without the leading dot
        return type_name
    return f"{package}.{type_name}"


_TAG_RE = re.compile(r'(\w+):"((?:[^"\\]|\\.)*)"')
_GO_FIELD_RE = re.compile(r"^(\w+\s+)?(\S+)\s+`([^`]*)`$")


def parse_go_structs(text: str) -> dict[str, dict[int, GoField]]:
    """Go struct name -> protobuf field number -> field, for fields with a protobuf tag."""
    structs: dict[str, dict[int, GoField]] = {}
    current: dict[int, GoField] | None = None
    for raw in text.splitlines():
        ln = re.sub(r"\s*//.*$", "", raw.strip()) if not raw.strip().startswith("//") else ""
        m = re.match(r"^type\s+(\w+)\s+struct\s*\{$", ln)
        if m:
            current = structs.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        if ln == "}" and not raw.startswith("\t"):
            current = None
            continue
        fm = _GO_FIELD_RE.match(ln)
        if not fm:
            continue
        tags = dict(_TAG_RE.findall(fm.group(3)))
        proto = tags.get("protobuf")
        if not proto or proto == "-":
            continue
        number = int(proto.split(",")[1])
        go_type = fm.group(2)
        anonymous = fm.group(1) is None
        go_name = go_type.lstrip("*").rsplit(".", 1)[-1] if anonymous else fm.group(1).strip()
        json_tag = tags.get("json")
        json_name, options = None, ()
        if json_tag is not None:
            parts = json_tag.split(",")
            json_name, options = parts[0], tuple(parts[1:])
        current[number] = GoField(go_name, go_type, anonymous, json_name, options)
    return structs


class Generator:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.messages: dict[str, ProtoMessage] = {}
        self.loaded: set[str] = set()
        self.go: dict[str, dict[str, dict[int, GoField]]] = {}

    def load_proto(self, import_path: str) -> None:
        """Load ``k8s.io/<repo>/<dir>/generated.proto`` and its imports."""
        if import_path in self.loaded:
            return
        self.loaded.add(import_path)
        repo, path = self.sources.locate(import_path)
        _, _, imports, messages = parse_proto(self.sources.read(repo, path))
        for msg in messages:
            self.messages[msg.full_name] = msg
        for imp in imports:
            self.load_proto(imp)

    def go_structs(self, go_package: str) -> dict[str, dict[int, GoField]]:
        if go_package not in self.go:
            repo, path = self.sources.locate(go_package)
            structs: dict[str, dict[int, GoField]] = {}
            for name in self.sources.list_dir(repo, path):
                base = name.rsplit("/", 1)[-1]
                if (
                    not base.endswith(".go")
                    or base.endswith("_test.go")
                    or base.startswith(("zz_generated", "generated."))
                ):
                    continue
                for struct, fields in parse_go_structs(self.sources.read(repo, name)).items():
                    if fields:
                        structs[struct] = fields
            self.go[go_package] = structs
        return self.go[go_package]

    def table_field(self, msg: ProtoMessage, pf: ProtoField) -> tuple[int, str, str, str, str]:
        type_ = pf.type if pf.type in SCALARS else alias(pf.type)
        if alias(msg.full_name) in SPECIAL:
            return (pf.number, pf.name, pf.label, type_, "ptr")
        struct = self.go_structs(msg.go_package).get(msg.full_name.rsplit(".", 1)[-1])
        if struct is None or pf.number not in struct:
            raise SystemExit(f"no Go field for {msg.full_name}.{pf.name} = {pf.number}")
        gf = struct[pf.number]
        json_name = gf.go_name if gf.json_name is None else gf.json_name
        if json_name == "-":
            mode = "skip"
        elif gf.anonymous and json_name == "":
            if pf.label or pf.type in SCALARS:
                raise SystemExit(f"inline field {msg.full_name}.{pf.name} is not a struct")
            mode = "inline"
        elif gf.go_type.startswith("*"):
            mode = "ptr"
        elif "omitempty" in gf.json_options or "omitzero" in gf.json_options:
            mode = "omit"
        else:
            mode = "keep"
        if gf.go_type.startswith("*") and pf.label:
            raise SystemExit(f"pointer to a list or map: {msg.full_name}.{pf.name}")
        return (pf.number, json_name, pf.label, type_, mode)

    def reachable(self, roots: list[str]) -> list[str]:
        seen: list[str] = []
        queue = deque(roots)
        while queue:
            name = queue.popleft()
            if name in seen:
                continue
            if name not in self.messages:
                raise SystemExit(f"message {name} not found in the loaded protos")
            seen.append(name)
            queue.extend(f.type for f in self.messages[name].fields if f.type not in SCALARS)
        return seen


def served_kinds() -> list[tuple[str, str, str]]:
    """(group, version, kind) of every body the server decodes."""
    sys.path.insert(0, str(ROOT / "src"))
    from mo_devkit.localcluster.apiserver.builtins import BUILTIN_RESOURCE_TYPES

    kinds = [(rt.group, rt.version, rt.kind) for rt in BUILTIN_RESOURCE_TYPES]
    for api_version, kind in EXTRA_KINDS:
        group, _, version = api_version.rpartition("/")
        kinds.append((group, version, kind))
    return kinds


def render(
    sources: Sources,
    kinds: dict[tuple[str, str], str],
    table: dict[str, list[tuple[int, str, str, str, str]]],
) -> str:
    out = [
        '"""Wire layout and JSON shape of the Kubernetes protobuf messages the API',
        "server decodes (request bodies of the built-in kinds it serves).",
        "",
        "GENERATED by tools/gen_protobuf_schema.py from the generated.proto files and",
        "the Go types of these sources; do not edit by hand, re-run the script:",
        "",
    ]
    urls = {
        "api": "kubernetes/api",
        "apimachinery": "kubernetes/apimachinery",
        "apiextensions": "kubernetes/apiextensions-apiserver",
    }
    for key in ("api", "apimachinery", "apiextensions"):
        out.append(f"- github.com/{urls[key]} {sources.ref} ({sources.commits[key]})")
    out += [
        "",
        'A field is ``(number, json name, label, type, mode)``: label is ``""``',
        '(singular), ``"rep"`` or ``"map"`` (string keys; type is the value\'s);',
        "type is a proto scalar or a message of ``MESSAGES``; mode says when the",
        'decoded value appears in JSON, from the Go field: ``"ptr"`` (a pointer:',
        'when present on the wire, even if zero), ``"omit"`` (``omitempty``: when',
        'not zero), ``"keep"`` (always, zero included), ``"inline"`` (an embedded',
        'struct: its fields join the parent\'s) or ``"skip"`` (``json:"-"``).',
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        "Field = tuple[int, str, str, str, str]",
        "",
        f"SOURCE_REF: Final = {q(sources.ref)}",
        "",
        "# (apiVersion, kind) -> message of the object.",
        "KINDS: Final[dict[tuple[str, str], str]] = {",
    ]
    for (api_version, kind), name in sorted(kinds.items()):
        out.append(f"    ({q(api_version)}, {q(kind)}): {q(name)},")
    out += [
        "}",
        "",
        "# Accepted under any apiVersion (kube-apiserver registers it in every group version).",
        f"DELETE_OPTIONS: Final = {q(alias(DELETE_OPTIONS))}",
        "# The envelope after the magic prefix.",
        f"ENVELOPE: Final = {q(alias(ENVELOPE))}",
        "",
        "# Messages with a custom JSON form (Go MarshalJSON) -> decoder codec.",
        "SPECIAL: Final[dict[str, str]] = {",
    ]
    for name in sorted(SPECIAL):
        if name in table:
            out.append(f"    {q(name)}: {q(SPECIAL[name])},")
    out += ["}", "", "MESSAGES: Final[dict[str, tuple[Field, ...]]] = {"]
    for name in sorted(table):
        out.append(f"    {q(name)}: (")
        for f in table[name]:
            out.append(f"        ({f[0]}, {q(f[1])}, {q(f[2])}, {q(f[3])}, {q(f[4])}),")
        out.append("    ),")
    out.append("}")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", required=True, help="release tag shared by the three repositories")
    parser.add_argument("--api", type=Path, required=True, help="git dir of kubernetes/api")
    parser.add_argument("--apimachinery", type=Path, required=True, help="git dir of kubernetes/apimachinery")
    parser.add_argument(
        "--apiextensions", type=Path, required=True, help="git dir of kubernetes/apiextensions-apiserver"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    sources = Sources(
        {"api": args.api, "apimachinery": args.apimachinery, "apiextensions": args.apiextensions}, args.ref
    )
    gen = Generator(sources)
    kinds: dict[tuple[str, str], str] = {}
    roots = [ENVELOPE, DELETE_OPTIONS]
    gen.load_proto("k8s.io/apimachinery/pkg/runtime/generated.proto")
    gen.load_proto("k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto")
    for group, version, kind in served_kinds():
        repo, directory = GROUP_DIRS[group]
        prefix = {"api": "k8s.io/api", "apiextensions": "k8s.io/apiextensions-apiserver"}[repo]
        gen.load_proto(f"{prefix}/{directory}/{version}/generated.proto")
        full = f"{prefix.replace('/', '.').replace('-', '_')}.{directory.replace('/', '.')}.{version}.{kind}"
        if full not in gen.messages:
            raise SystemExit(f"no message {full} for {group}/{version} {kind}")
        roots.append(full)
        kinds[(f"{group}/{version}" if group else version, kind)] = alias(full)
    names = gen.reachable(roots)
    aliases = [alias(n) for n in names]
    if len(set(aliases)) != len(aliases):
        raise SystemExit("two messages share an alias")
    table = {alias(n): [gen.table_field(gen.messages[n], f) for f in gen.messages[n].fields] for n in names}
    args.output.write_text(render(sources, kinds, table))
    # The table is written one field per line; ruff settles the layout (CI checks it).
    subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", str(args.output)], check=True)
    print(f"{len(table)} messages, {sum(len(v) for v in table.values())} fields -> {args.output}")


if __name__ == "__main__":
    main()
