"""docs/your-api.md, walked as a reader would: every ``sh`` block runs as written, in order, in one shell
session (its working folder, exports and activated virtual environment carry over), from an empty folder with
no qlab on the PATH: step 1 makes a fresh virtual environment and installs exactly the page's install line,
then every command runs against a real httpbin under gunicorn on 127.0.0.1.

Nothing is published under the distribution's name yet, so pip takes ``qualitylab`` from this checkout's wheel
(built here, ``tests/wheels.py``, offered with ``PIP_FIND_LINKS``) and the rest (httpbin, flasgger, gunicorn)
from the package index: the install line stays the page's. A ``yaml`` block marked
``<!-- guide-test: merge into FILE at a.b.0.c -->`` is merged into that place of the file, as the page tells
the reader to do. Blocks marked ``<!-- guide-test: skip (why) -->`` are not run (there are none). The only
thing the test chooses is ``API_PORT``: a free port instead of 8080.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
import yaml

import servers

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "your-api.md"
BLOCK = re.compile(r"(?:<!-- guide-test: (?P<mark>[^>]*?) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)```", re.S)


def steps(text: str) -> list[tuple[str, str, str]]:
    """(kind, mark, body) of every fenced block: kind ``run`` (sh), ``merge`` (a marked yaml block) or ``skip``."""
    out = []
    for match in BLOCK.finditer(text):
        mark, lang, body = match["mark"] or "", match["lang"], match["body"]
        if mark.startswith("skip"):
            out.append(("skip", mark, body))
        elif lang == "sh":
            out.append(("run", mark, body))
        elif mark.startswith("merge into "):
            out.append(("merge", mark, body))
    return out


def merge(folder: Path, mark: str, body: str) -> None:
    """``merge into qlab.yaml at environments.api``: the block's mapping joins the mapping at that path."""
    found = re.fullmatch(r"merge into (\S+) at (\S+)", mark)
    assert found, f"unreadable mark {mark!r}"
    path = folder / found[1]
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    node: Any = data
    for key in found[2].split("."):
        node = node[int(key)] if isinstance(node, list) else node[key]
    node.update(yaml.safe_load(body))
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_the_guide_runs_every_block_and_installs_with_one_line() -> None:
    found = steps(GUIDE.read_text(encoding="utf-8"))
    kinds = [kind for kind, _, _ in found]
    assert kinds.count("skip") == 0, "every block of the guide runs, the install too"
    assert kinds.count("run") >= 9 and kinds.count("merge") >= 3
    install = [line for _, _, body in found for line in body.splitlines() if "pip install" in line]
    assert len(install) == 1 and install[0].startswith("pip install qualitylab "), install


@pytest.mark.slow
def test_the_guide_runs_as_written_against_a_real_httpbin(tmp_path: Path, built_wheel: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the guide waits for the API with it")
    state = tmp_path / "state"
    state.mkdir()
    here = Path(sys.executable).parent  # this test's virtual environment: not on the reader's PATH
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != here)
    env = {
        "PATH": path,
        "HOME": str(tmp_path),
        "API_PORT": str(servers.free_port()),
        "LANG": "C.UTF-8",
        "PIP_FIND_LINKS": str(built_wheel.parent),  # qualitylab from this checkout (see the module docstring)
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    (state / "env").write_text("", encoding="utf-8")
    (state / "cwd").write_text(str(tmp_path / "work"), encoding="utf-8")
    (tmp_path / "work").mkdir()
    log: list[str] = []
    try:
        for kind, mark, body in steps(GUIDE.read_text(encoding="utf-8")):
            cwd = Path((state / "cwd").read_text(encoding="utf-8").strip())
            if kind == "merge":
                merge(cwd, mark, body)
                continue
            if kind == "skip":
                continue
            script = (
                f'set -euo pipefail\ncd "{cwd}"\n. "{state / "env"}"\n{body}\n'
                f'pwd > "{state / "cwd"}"\nexport -p > "{state / "env"}"\n'
            )
            done = subprocess.run(
                ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300, check=False
            )
            log.append(f"$ {body}\n{done.stdout}{done.stderr}")
            assert done.returncode == 0, "\n".join(log)[-6000:]
    finally:
        pid_file = tmp_path / "work" / "api.pid"
        if pid_file.exists():  # the API the guide starts by hand, when a step failed before it stopped it
            with suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
    text = "\n".join(log)
    assert text.count("PASS") >= 5, text[-4000:]
    assert "qlab run: exit 1 (blocked)" in text and "qlab promote: exit 1 (blocked)" in text, text[-4000:]
    # section 9, the miss -> alias loop: the sandbox shows the gain and no regression, and the alias is accepted
    assert "regressionCheck:  passed" in text and "improvementCheck: passed (words-guid-001)" in text, text[
        -4000:
    ]
    assert "accepted sg-d08a7433dd02: added 'fresh guid' to gates/aliases.yaml" in text, text[-4000:]
    result = tmp_path / "work" / "my-api" / ".qlab" / "out" / "result.json"
    assert json.loads(result.read_text(encoding="utf-8"))["decision"]["verdict"] == "pass"
    assert "my-dev-token" not in result.read_text(encoding="utf-8")  # the token never reaches an output
