"""Reads what one version of the official Python client (oz-agent-sdk) reads
back from the API and prints it as facts in the shape of package
openapi/facts: operations keyed "METHOD /path" with their success answer,
and the named schemas those answers use (field names, JSON types, enum
values, nullability, required-ness), with the client and version they came
from. Descriptions and code are not kept.

    python3 openapi/clientfacts/extract_python.py /path/to/oz-sdk-python

The argument is a checkout of the client's public source: api.md lists every
method with its HTTP method, path and return type; the return types are
pydantic models under src/<package>/types. The client's own code is never
imported (its dependencies need not be installed): the files are read with
the ast module, so only the standard library is needed.

A model field without a default is required; one with a default (the
models write "= None") may be left out. Optional[X] admits null. Literal
values form an enum. A pydantic alias (FieldInfo(alias="model_id")) is the
name on the wire.
"""

import ast
import json
import os
import re
import sys


def fail(msg):
    sys.stderr.write("clientfacts: " + msg + "\n")
    sys.exit(1)


class Module:
    """One parsed source file: its classes, type aliases and imports."""

    def __init__(self, path, dotted):
        self.path = path
        self.dotted = dotted  # package.sub.module
        with open(path, encoding="utf-8") as f:
            self.tree = ast.parse(f.read(), path)
        self.classes = {}
        self.aliases = {}
        self.imports = {}  # local name -> (module dotted name, name there)
        self.main = None
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if ast.unparse(node.annotation) == "TypeAlias":
                    self.aliases[node.target.id] = node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and target.id == "__all__" and isinstance(node.value, ast.List):
                    if node.value.elts:
                        self.main = node.value.elts[0].value
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                base = self.dotted.split(".")[: -node.level]
                if node.module:
                    base = base + node.module.split(".")
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (".".join(base), alias.name)


class Extractor:
    def __init__(self, checkout, package):
        self.checkout = checkout
        self.src = os.path.join(checkout, "src")
        self.package = package
        self.modules = {}
        self.schemas = {}

    def module(self, dotted):
        if dotted not in self.modules:
            base = os.path.join(self.src, *dotted.split("."))
            path = base + ".py" if os.path.exists(base + ".py") else os.path.join(base, "__init__.py")
            if not os.path.exists(path):
                fail("no module %s" % dotted)
            self.modules[dotted] = Module(path, dotted)
        return self.modules[dotted]

    def module_of_file(self, rel):
        rel = rel.lstrip("./")
        if not rel.startswith("src/") or not rel.endswith(".py"):
            fail("not a source file: %s" % rel)
        return self.module(rel[len("src/") : -len(".py")].replace("/", "."))

    def lookup(self, mod, name):
        """Finds where a name used in mod is defined: (module, kind, node)."""
        for _ in range(16):
            if name in mod.classes:
                return mod, "class", mod.classes[name]
            if name in mod.aliases:
                return mod, "alias", mod.aliases[name]
            if name not in mod.imports:
                return None
            dotted, name = mod.imports[name]
            mod = self.module(dotted)
        return None

    def schema_name(self, mod, name):
        # The module's main class keeps its name; the classes it nests (the
        # models write RunItem.AgentSkill as a class AgentSkill beside
        # RunItem) are named after it, as the TypeScript client names them.
        if mod.main and mod.main != name:
            return mod.main + "." + name
        return name

    def named(self, mod, name, generics):
        found = self.lookup(mod, name)
        if not found:
            fail("%s: cannot resolve %s" % (mod.dotted, name))
        where, kind, node = found
        key = self.schema_name(where, name)
        if key in self.schemas:
            return {"$ref": key}
        self.schemas[key] = {}  # a recursive reference ends here
        if kind == "alias":
            self.schemas[key] = self.convert(where, node, {})
        else:
            self.schemas[key] = self.model(where, node)
        return {"$ref": key}

    def model(self, mod, cls):
        properties, required = {}, []
        for base in cls.bases:
            base_name = ast.unparse(base)
            if base_name in ("BaseModel", "Generic") or base_name.startswith(("Generic[", "BaseSyncPage", "BasePage", "BaseAsyncPage")):
                continue
            found = self.lookup(mod, base_name)
            if found and found[1] == "class":
                inherited = self.model(found[0], found[2])
                properties.update(inherited.get("properties", {}))
                required += inherited.get("required", [])
        self.fields(mod, cls, {}, properties, required)
        schema = {"type": "object"}
        if properties:
            schema["properties"] = properties
        if required:
            schema["required"] = sorted(set(required))
        return schema

    def fields(self, mod, cls, generics, properties, required):
        for stmt in cls.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            name = stmt.target.id
            has_default = stmt.value is not None
            if isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) == "FieldInfo":
                has_default = False
                for kw in stmt.value.keywords:
                    if kw.arg == "alias":
                        name = kw.value.value
                    if kw.arg in ("default", "default_factory"):
                        has_default = True
            properties[name] = self.convert(mod, stmt.annotation, generics)
            if not has_default:
                required.append(name)

    def convert(self, mod, node, generics):
        if isinstance(node, ast.Constant) and node.value is None:
            return {"nullable": True}
        if isinstance(node, ast.Name) or isinstance(node, ast.Attribute):
            name = ast.unparse(node)
            if name in generics:
                return generics[name]
            simple = {
                "str": {"type": "string"},
                "int": {"type": "integer"},
                "float": {"type": "number"},
                "bool": {"type": "boolean"},
                "datetime": {"type": "string", "format": "date-time"},
                "date": {"type": "string", "format": "date"},
                "object": {},
                "builtins.object": {},
                "Any": {},
            }
            if name in simple:
                return dict(simple[name])
            return self.named(mod, name, generics)
        if isinstance(node, ast.Subscript):
            head = ast.unparse(node.value)
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Optional":
                return dict(self.convert(mod, args[0], generics), nullable=True)
            if head == "List":
                return {"type": "array", "items": self.convert(mod, args[0], generics)}
            if head == "Dict":
                return {"type": "object", "additional_properties": self.convert(mod, args[1], generics)}
            if head == "Literal":
                values = sorted(a.value for a in args)
                kinds = {type(v) for v in values}
                json_type = {str: "string", bool: "boolean", int: "integer", float: "number"}[kinds.pop()]
                return {"type": json_type, "enum": values}
            if head == "Annotated":
                return self.convert(mod, args[0], generics)
            if head == "Union":
                members = [a for a in args if not (isinstance(a, ast.Constant) and a.value is None)]
                branches = [self.convert(mod, a, generics) for a in members]
                schema = branches[0] if len(branches) == 1 else {"one_of": branches}
                if len(members) != len(args):
                    schema = dict(schema, nullable=True)
                return schema
            # A generic class (SyncRunsCursorPage[RunItem]): its fields with
            # the type argument put in.
            return self.page(mod, head, args, generics)
        fail("%s: unsupported annotation %s" % (mod.dotted, ast.unparse(node)))

    def page(self, mod, head, args, generics):
        found = self.lookup(mod, head)
        if not found or found[1] != "class":
            fail("%s: cannot resolve %s" % (mod.dotted, head))
        where, _, cls = found
        params = []
        for base in cls.bases:
            text = ast.unparse(base)
            if text.startswith("Generic["):
                params = [p.strip() for p in text[len("Generic[") : -1].split(",")]
        bound = {p: self.convert(mod, a, generics) for p, a in zip(params, args)}
        properties, required = {}, []
        self.fields(where, cls, bound, properties, required)
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = sorted(required)
        return schema

    def return_type(self, text, link):
        """The success answer of a method from api.md's "-> ..." part."""
        if link is None:
            if text == "None":
                return {}
            mod = self.module(self.package + "._models")
            return {"content": {"application/json": self.convert(mod, ast.parse(text, mode="eval").body, {})}}
        mod = self.module_of_file(link)
        # The page classes live in the package's pagination module.
        if "[" in text:
            pagination = self.module(self.package + ".pagination")
            head, inner = text.split("[", 1)
            item = self.convert(mod, ast.parse(inner.rstrip("]"), mode="eval").body, {})
            found = pagination.classes.get(head)
            if not found:
                fail("no page class %s" % head)
            return {"content": {"application/json": self.page_schema(pagination, found, item)}}
        return {"content": {"application/json": self.named(mod, text, {})}}

    def page_schema(self, mod, cls, item):
        properties, required = {}, []
        self.fields(mod, cls, {"_T": item}, properties, required)
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = sorted(required)
        return schema


METHOD_LINE = re.compile(
    r'<code title="(get|post|put|patch|delete) ([^"]+)">client\.([\w.]+)\.<a href="[^"]+">(\w+)</a>\(.*?\) -> '
    r'(?:<a href="([^"]+)">([^<]+)</a>|([\w\[\]]+))</code>'
)


def main(argv):
    if len(argv) != 2 or not os.path.exists(os.path.join(argv[1], "api.md")):
        fail("usage: python3 extract_python.py <oz-sdk-python checkout (a directory holding api.md)>")
    checkout = argv[1]
    with open(os.path.join(checkout, "pyproject.toml"), encoding="utf-8") as f:
        pyproject = f.read()
    name = re.search(r'^name = "([^"]+)"', pyproject, re.M).group(1)
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    with open(os.path.join(checkout, "api.md"), encoding="utf-8") as f:
        api = f.read()
    # The package api.md links to (src/ may hold old names beside it).
    package = re.search(r'href="\./src/(\w+)/', api)
    if not package:
        fail("api.md links to no source file")
    x = Extractor(checkout, package.group(1))
    operations = {}
    for m in METHOD_LINE.finditer(api):
        verb, route, resource, method, link, linked, plain = m.groups()
        operations[verb.upper() + " " + route] = {
            "operation_id": resource + "." + method,
            "security": ["bearerAuth"],
            "responses": {"2XX": x.return_type(linked or plain, link)},
        }
    if not operations:
        fail("api.md lists no methods")
    out = {
        "client": {"language": "python", "package": name, "version": version, "source": "source checkout (api.md, src/*/types)"},
        "operations": operations,
        "schemas": x.schemas,
    }
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
