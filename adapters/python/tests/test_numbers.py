"""Numbers keep the text the model wrote them in (polyloop_conform.numbers)."""

from __future__ import annotations

import json
import unittest

from polyloop_conform import Number, dumps


class NumbersKeepTheirText(unittest.TestCase):
    def test_round_trip_keeps_every_written_form(self) -> None:
        for text in ['{"w":2.0,"h":1e0}', '{"a":[1,2.0,3E1,-0.5e+3]}', '{"n":10.000,"s":"1e0","z":null,"b":true}']:
            with self.subTest(text=text):
                self.assertEqual(dumps(json.loads(text, parse_float=Number)), text)

    def test_a_number_is_still_a_float(self) -> None:
        n = json.loads("1e0", parse_float=Number)
        self.assertIsInstance(n, float)
        self.assertEqual(n, 1)
        self.assertTrue(n.is_integer())
        self.assertEqual(n.text, "1e0")

    def test_text_is_not_escaped_and_plain_floats_are_json(self) -> None:
        self.assertEqual(dumps({"t": "“本市”", "f": 0.5}), '{"t":"“本市”","f":0.5}')

    def test_what_json_cannot_hold_is_refused(self) -> None:
        with self.assertRaises(TypeError):
            dumps({"x": object()})


if __name__ == "__main__":
    unittest.main()
