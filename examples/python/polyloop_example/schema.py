"""A small JSON Schema checker: the keywords a tool's parameters may use.

PolyLoop validates a call's arguments against its tool's parameter schema,
without coercion (a string "3" is not an integer), at every depth, with the
keywords 0006.D6.keywords admits: type, properties, required,
additionalProperties, items, prefixItems, enum, const, the numeric bounds
and multipleOf, minLength/maxLength, pattern, minItems/maxItems, allOf,
anyOf, oneOf, not, $defs, $ref (a fragment of the schema) and $anchor. Any
other keyword of JSON Schema 2020-12 is refused when the registry is built,
named; a key that is no keyword of the dialect is an annotation.

Only the standard library is available, so `pattern` is read with Python's
`re`, which agrees with ECMA-262 on the common syntax (lookahead,
lookbehind, classes); the syntax only Python has, `(?P<name>...)`, is
refused as ECMA-262 refuses it (0006.D6.pattern).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}

# The 2020-12 keywords 0006.D6.keywords leaves out.
_OUTSIDE = {
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
    "minProperties", "maxProperties", "uniqueItems", "contains", "minContains", "maxContains",
    "if", "then", "else", "unevaluatedProperties", "unevaluatedItems",
    "$id", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
}
_DIALECT = {"https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"}
_ONE_SCHEMA = ("items", "additionalProperties", "not")
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
_SCHEMA_MAPS = ("properties", "$defs")


class SchemaError(Exception):
    """The schema itself is broken."""


def _subschemas(schema: dict, where: str) -> list[tuple[Any, str]]:
    """The schemas a schema holds through the admitted keywords."""
    out: list[tuple[Any, str]] = []
    for k in _ONE_SCHEMA:
        if k in schema:
            out.append((schema[k], f"{where}/{k}"))
    for k in _SCHEMA_LISTS:
        for i, sub in enumerate(schema.get(k) or []):
            out.append((sub, f"{where}/{k}/{i}"))
    for k in _SCHEMA_MAPS:
        for name, sub in (schema.get(k) or {}).items():
            out.append((sub, f"{where}/{k}/{name}"))
    return out


def _anchors(schema: Any, found: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema, dict):
        if isinstance(schema.get("$anchor"), str):
            found[schema["$anchor"]] = schema
        for sub, _ in _subschemas(schema, ""):
            _anchors(sub, found)
    return found


def resolve(root: dict, ref: str) -> Any:
    """The subschema a local $ref points at (a JSON pointer or an anchor
    after #), or None when it does not resolve inside root (nothing is
    fetched: 0006.D6.compile)."""
    if not ref.startswith("#"):
        return None
    frag = ref[1:]
    if frag and not frag.startswith("/"):
        return _anchors(root, {}).get(frag)
    node: Any = root
    for part in [p for p in frag.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node if isinstance(node, (dict, bool)) else None


def check_schema(schema: Any, where: str = "", root: Any = None) -> None:
    """Refuse a schema that does not compile (0006.D6.compile) or uses a
    keyword 0006.D6.keywords leaves out, naming the keyword and where."""
    if root is None:
        root = schema
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{where or 'schema'} is not an object")
    for k in schema:
        if k in _OUTSIDE:
            raise SchemaError(f"{where}/{k}: keyword {k!r} is not one a tool's parameters may use (0006.D6.keywords)")
    if "$schema" in schema and schema["$schema"] not in _DIALECT:
        raise SchemaError(f"{where}/$schema: only JSON Schema 2020-12")
    t = schema.get("type")
    names = t if isinstance(t, list) else [t] if t is not None else []
    for n in names:
        if n not in _TYPES:
            raise SchemaError(f"{where or 'schema'}: unknown type {n!r}")
    req = schema.get("required")
    if req is not None and not (isinstance(req, list) and all(isinstance(r, str) for r in req)):
        raise SchemaError(f"{where}/required is not a list of names")
    if "$ref" in schema and resolve(root, str(schema["$ref"])) is None:
        raise SchemaError(f"{where}/$ref {schema['$ref']!r} does not resolve inside the schema")
    for k in ("minLength", "maxLength", "minItems", "maxItems"):
        if k in schema and not (_is(schema[k], "integer") and schema[k] >= 0):
            raise SchemaError(f"{where}/{k} is not a non-negative integer")
    if "multipleOf" in schema and not (_is(schema["multipleOf"], "number") and schema["multipleOf"] > 0):
        raise SchemaError(f"{where}/multipleOf is not a number above 0")
    if "pattern" in schema:
        pattern = schema["pattern"]
        if not isinstance(pattern, str) or "(?P" in pattern:
            raise SchemaError(f"{where}/pattern is not an ECMA-262 regular expression")
        try:
            re.compile(pattern)
        except re.error as err:
            raise SchemaError(f"{where}/pattern: {err}") from err
    for sub, at in _subschemas(schema, where):
        check_schema(sub, at, root)


def _is(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if t == "integer":
        # By the written decimal: 9007199254740993.5 is a float whose
        # binary value is whole (0006.D6.exact-numbers).
        return isinstance(value, int) or (isinstance(value, float) and _exact(value).denominator == 1)
    return isinstance(value, (int, float))


def equal(a: Any, b: Any) -> bool:
    """JSON equality (0006.D6.enum): the same JSON type and value; numbers
    by value (1 is 1.0), never a number for a boolean or a string."""
    if _is(a, "number") and _is(b, "number"):
        return _exact(a) == _exact(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _exact(n: Any) -> Fraction:
    """A number as the decimal it was written as, not its binary float."""
    return Fraction(getattr(n, "text", repr(n))) if isinstance(n, float) else Fraction(n)


def valid(schema: Any, value: Any, root: Any) -> bool:
    return not problems(schema, value, "", root)


def problems(schema: Any, value: Any, where: str = "", root: Any = None) -> list[str]:
    """Every way value breaks schema, each naming where. A schema's
    default is an annotation: nothing is filled in (0006.D6.no-defaults)."""
    here = where or "the arguments"
    if root is None:
        root = schema
    if schema is True:
        return []
    if schema is False:
        return [f"{here} is not allowed"]
    out: list[str] = []
    if "$ref" in schema:
        target = resolve(root, str(schema["$ref"]))
        if target is not None:
            out.extend(problems(target, value, where, root))
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        if not any(_is(value, n) for n in names):
            return out + [f"{here} should be {' or '.join(names)}"]
    if "enum" in schema and not any(equal(value, e) for e in schema["enum"]):
        out.append(f"{here} is not one of the allowed values")
    if "const" in schema and not equal(value, schema["const"]):
        out.append(f"{here} is not the required value")
    for sub in schema.get("allOf") or []:
        if not valid(sub, value, root):
            out.append(f"{here} does not match every schema of allOf")
            break
    if "anyOf" in schema and not any(valid(sub, value, root) for sub in schema["anyOf"]):
        out.append(f"{here} matches no schema of anyOf")
    if "oneOf" in schema and sum(valid(sub, value, root) for sub in schema["oneOf"]) != 1:
        out.append(f"{here} does not match exactly one schema of oneOf")
    if "not" in schema and valid(schema["not"], value, root):
        out.append(f"{here} matches the schema of not")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                out.append(f"{where}/{name} is required but missing")
        for name, sub in value.items():
            if name in props:
                out.extend(problems(props[name], sub, f"{where}/{name}", root))
            elif "additionalProperties" in schema:
                out.extend(problems(schema["additionalProperties"], sub, f"{where}/{name}", root))
    if isinstance(value, list):
        prefix = schema.get("prefixItems") or []
        for i, item in enumerate(value):
            if i < len(prefix):
                out.extend(problems(prefix[i], item, f"{where}/{i}", root))
            elif "items" in schema:
                out.extend(problems(schema["items"], item, f"{where}/{i}", root))
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{here} has too few items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{here} has too many items")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append(f"{here} is too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{here} is too long")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{here} does not match its pattern")
    if _is(value, "number"):
        # Bounds compare written decimals, not binary floats
        # (0006.D6.exact-numbers): 9007199254740993.5 is over 9007199254740993.
        v = _exact(value)
        if "minimum" in schema and v < _exact(schema["minimum"]):
            out.append(f"{here} is below its minimum")
        if "maximum" in schema and v > _exact(schema["maximum"]):
            out.append(f"{here} is above its maximum")
        if "exclusiveMinimum" in schema and v <= _exact(schema["exclusiveMinimum"]):
            out.append(f"{here} is not above its exclusive minimum")
        if "exclusiveMaximum" in schema and v >= _exact(schema["exclusiveMaximum"]):
            out.append(f"{here} is not below its exclusive maximum")
        if "multipleOf" in schema and (_exact(value) / _exact(schema["multipleOf"])).denominator != 1:
            out.append(f"{here} is not a multiple of {schema['multipleOf']}")
    return out
