"""The project layer: qlab.yaml and case files -> a validated, frozen :class:`Project`.

    project = load_project()            # ./qlab.yaml, searched upwards to the repository root
    project.config.gates                # the ordered gates
    project.cases_for("search_core")    # the cases of one suite

Every problem of every file is reported at once as a :class:`~qlab.contracts.errors.ConfigError` whose diagnostics read
``file:line:col: $.json.path: message``. Paths written in qlab.yaml stay as written; :func:`resolve` turns one
into a path against the config's folder.
"""

from __future__ import annotations

from qlab.project.cases import CaseFile
from qlab.project.files import find_config, resolve
from qlab.project.load import Project, load_project

__all__ = ["CaseFile", "Project", "find_config", "load_project", "resolve"]
