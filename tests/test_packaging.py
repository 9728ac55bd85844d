"""What a maintainer publishes: a distribution name free on the package index (``qlab`` there is an unrelated
project), named by every install hint; the licence file and its SPDX declaration, the typing marker, project
links and one version source in the wheel; Action examples pinned to the tag of this version."""

from __future__ import annotations

import email
import importlib.metadata
import re
import zipfile
from pathlib import Path

import qlab
import wheels

ROOT = Path(__file__).resolve().parents[1]
TEXT_FILES = (
    "README.md",
    "action.yml",
    ".ci/run",
    "docs/**/*.md",
    "examples/**/*.yml",
    ".github/workflows/*.yml",
    "runner/qlab/**/*.py",
    "schemas/*.json",
)
_INSTALL = re.compile(r"pip3? install((?:[ \t]+[^\s`#;&|)]+)*)")
# ``qlab``, ``'qlab[mcp]'``, ``qlab==0.1``: the bare distribution name as a requirement
_BARE_NAME = re.compile(r"""['"]?qlab(?:\[[^\]]*\])?(?:[=<>~!].*)?['"]?""")


def _texts() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for pattern in TEXT_FILES
        for path in sorted(ROOT.glob(pattern))
        if path.is_file()
    }


def test_no_install_hint_names_the_unrelated_qlab_distribution() -> None:
    found = [
        f"{name}: {match.group(0)}"
        for name, text in _texts().items()
        for match in _INSTALL.finditer(text)
        if any(_BARE_NAME.fullmatch(word) for word in match.group(1).split())
    ]
    assert not found, found
    assert "dist/qlab-" not in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_install_hints_name_the_distribution() -> None:
    texts = _texts()
    assert f"pip install {wheels.DISTRIBUTION}" in texts["README.md"]
    assert f"pip install {wheels.DISTRIBUTION} " in texts["docs/your-api.md"]
    hints = "".join(texts[f"runner/qlab/{m}"] for m in ("collection/mcp.py", "engine/semantic.py"))
    assert f"pip install '{wheels.DISTRIBUTION}[mcp]'" in hints
    assert f"pip install '{wheels.DISTRIBUTION}[semantic]'" in hints


def test_the_version_has_one_source() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.M), "the version is read from qlab.__version__"
    assert 'dynamic = ["version"]' in project
    assert 'path = "runner/qlab/version.py"' in pyproject
    assert importlib.metadata.version(wheels.DISTRIBUTION) == qlab.__version__


def test_the_wheel_carries_its_licence_typing_marker_links_and_version(built_wheel: Path) -> None:
    names = zipfile.ZipFile(built_wheel).namelist()
    info = f"{wheels.DISTRIBUTION}-{qlab.__version__}.dist-info"
    assert built_wheel.name == f"{wheels.DISTRIBUTION}-{qlab.__version__}-py3-none-any.whl"
    assert "qlab/py.typed" in names and "qlab/cli.py" in names
    assert f"{info}/licenses/LICENSE" in names
    assert any(n.startswith("qlab/schemas/") and n.endswith(".json") for n in names)
    with zipfile.ZipFile(built_wheel) as wheel:
        metadata = email.message_from_bytes(wheel.read(f"{info}/METADATA"))
        licence = wheel.read(f"{info}/licenses/LICENSE").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert metadata["Name"] == wheels.DISTRIBUTION and metadata["Version"] == qlab.__version__
    assert metadata["License-Expression"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    links = dict(link.split(", ", 1) for link in metadata.get_all("Project-URL") or ())
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(links), links
    assert all(url.startswith("https://") for url in links.values())
    assert "qlab = qlab.cli:main" in entry_points  # the command keeps its name


def test_action_examples_use_the_tag_of_this_version() -> None:
    refs = {
        (name, ref)
        for name, text in _texts().items()
        for ref in re.findall(r"uses: qlab-dev/qlab@(\S+)", text)
    }
    assert refs, "the docs and examples show the Action"
    assert {ref for _, ref in refs} == {f"v{qlab.__version__}"}, sorted(refs)
