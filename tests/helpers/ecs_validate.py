#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validate ECS task definitions (JSON files) offline, as RegisterTaskDefinition's input.

Usage: ecs_validate.py FILE...

Each file is checked against botocore's Amazon ECS service model (Debian's python3-botocore):
botocore's ParamValidator (unknown parameters, missing required ones, wrong types, ranges), and
the model's enums, which ParamValidator does not check ("pidMode": "hosts" is refused here).
Prints each problem as FILE: PROBLEM on stderr; exit 0 when there is none, 1 otherwise.
"""

import json
import sys

import botocore.session
from botocore.validate import ParamValidator


def enum_errors(value, shape, path):
    """The model's enum values, walked through structures, lists and maps."""
    kind = shape.type_name
    if kind == "structure" and isinstance(value, dict):
        for k, v in value.items():
            if k in shape.members:
                yield from enum_errors(v, shape.members[k], "%s.%s" % (path, k))
    elif kind == "list" and isinstance(value, list):
        for i, v in enumerate(value):
            yield from enum_errors(v, shape.member, "%s[%d]" % (path, i))
    elif kind == "map" and isinstance(value, dict):
        for k, v in value.items():
            yield from enum_errors(v, shape.value, "%s.%s" % (path, k))
    elif kind == "string" and shape.enum and isinstance(value, str) and value not in shape.enum:
        yield "%s: %r is not one of %s" % (path, value, ", ".join(shape.enum))


def main():
    model = botocore.session.get_session().get_service_model("ecs")
    shape = model.operation_model("RegisterTaskDefinition").input_shape
    bad = 0
    for f in sys.argv[1:]:
        try:
            td = json.load(open(f, encoding="utf-8"))
        except (OSError, ValueError) as e:
            print("%s: %s" % (f, e), file=sys.stderr)
            bad += 1
            continue
        problems = []
        report = ParamValidator().validate(td, shape)
        if report.has_errors():
            problems += report.generate_report().splitlines()
        problems += list(enum_errors(td, shape, "input"))
        for p in problems:
            print("%s: %s" % (f, p.strip()), file=sys.stderr)
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
