#!/usr/bin/env python3
"""Checks manifests against the thumbframe JSON Schema with Python's jsonschema (an
independent validator). Usage: python3 check-schema.py SCHEMA DIR_OR_FILE...
Prints each violation and a closing 'schema: N passed, M failed' line; exits 1 on any failure
or when there was nothing to check."""
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

import json
import pathlib
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
files = []
for argument in sys.argv[2:]:
    path = pathlib.Path(argument)
    files += sorted(path.glob("*.json")) if path.is_dir() else [path]
passed = failed = 0
for file in files:
    errors = list(validator.iter_errors(json.load(open(file))))
    for error in errors[:5]:
        print(f"{file}: /{'/'.join(map(str, error.absolute_path))}: {error.message[:200]}")
    failed += bool(errors)
    passed += not errors
print(f"schema: {passed} passed, {failed} failed")
sys.exit(1 if failed or not files else 0)
