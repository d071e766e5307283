"""The corruption cases every file format the project reads back is put through (tests/test_hostile_*.py).

Each case turns a good file's bytes into a damaged one. The byte cases fit any format; the JSON cases take
one parsed document (a dict) and damage one field of it, so that a test can name the field the loader must
check. A loader passes a case when it raises its own error (a ValueError the ``dnb`` command prints as one
``dnb: error:`` line) that names the file, and changes nothing.
"""

from __future__ import annotations

import json
import math

#: Damage to the bytes of any file.
BYTE_CASES = {
    "empty": lambda data: b"",
    "truncated": lambda data: data[: max(1, len(data) // 2)],
    "garbage": lambda data: b"\x00\xffnot this format\x13\x37" * 40,
    "zeros": lambda data: b"\x00" * len(data),
    "flipped": lambda data: data[:len(data) // 3] + bytes(b ^ 0x5A for b in data[len(data) // 3:len(data) // 3 + 64])
    + data[len(data) // 3 + 64:],
}

#: A JSON text nested deeper than Python's parser recurses (RecursionError in ``json.loads``).
NESTED = "[" * 100_000 + "]" * 100_000

#: Values that replace one field of a JSON document: wrong types, huge numbers, NaN and infinity (as Python's
#: ``json`` writes them), deep nesting and paths that leave their folder.
VALUE_CASES = {
    "wrong type: list": [1, 2],
    "wrong type: string": "seven",
    "wrong type: object": {"a": 1},
    "wrong type: null": None,
    "wrong type: bool": True,
    "huge number": 10 ** 400,
    "huge float": 1.7e308,
    "negative": -5,
    "NaN": math.nan,
    "infinity": math.inf,
}

#: Paths that must never be followed out of a run folder.
TRAVERSALS = ["../outside", "../../etc/passwd", "/etc/passwd", "a/../../outside", "..", "."]


def damaged_json(doc: dict, field: str, value) -> bytes:
    """``doc`` with ``field`` (dotted for nested keys) set to ``value``, as JSON bytes (NaN as ``NaN``)."""
    doc = json.loads(json.dumps(doc))
    *path, last = field.split(".")
    inner = doc
    for key in path:
        inner = inner[key]
    inner[last] = value
    return json.dumps(doc).encode()


def json_document_cases(doc) -> dict[str, bytes]:
    """Whole-document damage of a JSON file: another type at the top, nesting, NaN, a huge number."""
    return {
        "top-level list": json.dumps([doc]).encode(),
        "top-level string": b'"just a string"',
        "top-level number": b"12345",
        "nested": NESTED.encode(),
        "NaN document": b"NaN",
        "huge number document": ("1" + "0" * 5000).encode(),
        "two documents": (json.dumps(doc) + "\n" + json.dumps(doc)).encode(),
    }


def jsonl_line_cases(row: dict) -> dict[str, bytes]:
    """Damaged lines of a JSON-lines file (each case is one line, with its newline)."""
    return {
        "garbage line": b"}{ not json\n",
        "nested line": NESTED.encode() + b"\n",
        "huge number line": ("1" + "0" * 5000).encode() + b"\n",
        "list line": json.dumps([row]).encode() + b"\n",
        "NaN line": b"NaN\n",
        "torn line": json.dumps(row).encode()[:-7] + b"\n",
        "bytes that are not text": b"\xff\xfe\x00bad\n",
    }
