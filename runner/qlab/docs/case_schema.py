"""``schemas/case.schema.json``'s assertion types, generated from the registries that judge them.

The ``assertion`` union and one ``assertion_<type>`` definition per type come from each type's ``schema``: the
search, select and plan types of ``qlab.stages.engine_checks``, then the execute types of
``qlab.execute.assertions`` (``qlab.contracts.extensions.assertion_branch``). The rest of the file is written by hand
and kept as it is. Plugin packages' types are not written here: qlab adds them when it loads the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from qlab.contracts import extensions
from qlab.execute import assertions
from qlab.stages import engine_checks


def generate(current: Mapping[str, Any]) -> str:
    """The text of the case schema: ``current`` (the file as it is) with its assertion types regenerated."""
    types = [*engine_checks.TYPES.values(), *assertions.ASSERTIONS.values()]
    schema = extensions.with_assertions(extensions.without_assertions(current), types)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
