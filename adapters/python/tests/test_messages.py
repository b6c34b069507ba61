"""Each TypedDict of polyloop_conform.messages has the keys of its schema
shape in docs/protocol.schema.json, with the same ones required, and
every message type of the schema has a TypedDict."""

from __future__ import annotations

import json
import pathlib
import unittest

from polyloop_conform import messages

SCHEMA = pathlib.Path(__file__).resolve().parents[3] / "docs" / "protocol.schema.json"


def resolve(doc: dict, pointer: str) -> dict:
    node = doc
    for part in pointer.strip("/").split("/"):
        node = node[part]
    return node


class Shapes(unittest.TestCase):
    def setUp(self) -> None:
        self.schema = json.loads(SCHEMA.read_text())

    def test_each_typed_dict_has_its_shapes_keys(self) -> None:
        for pointer, typed in messages.SCHEMA_SHAPES.items():
            with self.subTest(pointer):
                shape = resolve(self.schema, pointer)
                self.assertEqual(set(typed.__required_keys__) | set(typed.__optional_keys__), set(shape["properties"]),
                                 f"{typed.__name__} keys differ from {pointer}")
                self.assertEqual(set(typed.__required_keys__), set(shape.get("required", [])),
                                 f"{typed.__name__} required keys differ from {pointer}")

    def test_every_message_type_has_a_typed_dict(self) -> None:
        types = set(self.schema["properties"]["type"]["enum"])
        covered = set()
        for typed in messages.SCHEMA_SHAPES.values():
            hint = str(typed.__annotations__.get("type", ""))
            covered.update(t for t in types if "Literal" in hint and f"'{t}'" in hint)
        self.assertEqual(covered, types)


if __name__ == "__main__":
    unittest.main()
