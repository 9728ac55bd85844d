"""qlab (Quality Lab): staged quality gates for API collections and the skills built on them.

The public API (docs/library.md); everything else is internal and may change. ``import qlab`` stays light: the
names are imported on first use.

    result = qlab.run_project("qlab.yaml", selection=qlab.SelectionSpec(suites=("search_core",)))
    result.decision, result.exit_code, result.written
"""

import importlib as _importlib
import typing as _typing

from qlab.contracts.errors import ConfigError, DependencyError, InputError, QlabError, UsageError
from qlab.version import __version__

if _typing.TYPE_CHECKING:
    from qlab.project import load_project
    from qlab.run.api import RunResult, run_project
    from qlab.run.options import RunEvent
    from qlab.run.selection import SelectionSpec
    from qlab.run.shard import ShardSpec

__all__ = [
    "ConfigError",
    "DependencyError",
    "InputError",
    "QlabError",
    "RunEvent",
    "RunResult",
    "SelectionSpec",
    "ShardSpec",
    "UsageError",
    "__version__",
    "load_project",
    "run_project",
]

# the names imported on first use -> their module
_LAZY = {
    "RunEvent": "qlab.run.options",
    "RunResult": "qlab.run.api",
    "SelectionSpec": "qlab.run.selection",
    "ShardSpec": "qlab.run.shard",
    "load_project": "qlab.project",
    "run_project": "qlab.run.api",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'qlab' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
