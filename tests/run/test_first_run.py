"""Issue 37, item 2, on seven real specs: ``qlab init --from-openapi`` writes thresholds that the first
``qlab run`` on the unchanged spec meets exactly (PASS), offline, as a new team would run it.

The specs: petstore3, Kubernetes and RestBench's Spotify and TMDB (carried in ``tests/data``), GitHub's REST
API (npm ``@octokit/openapi``), Blockfrost's and Directus' (npm ``@blockfrost/openapi``, ``@directus/specs``),
installed on demand under ``.qlab/node`` the way ``tests/servers.py`` installs npm servers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import servers
from qlab.cli import main
from qlab.run.starter import init_from_openapi

DATA = Path(__file__).resolve().parents[1] / "data"
SPECS = {
    "petstore3": ("file", "openapi-specs/petstore3/openapi.yaml", 19),
    "kubernetes": ("file", "openapi-specs/kubernetes/swagger.json", 1123),
    "spotify": ("file", "restbench/specs/spotify_oas.json", 40),
    "tmdb": ("file", "restbench/specs/tmdb_oas.json", 54),
    "github": ("@octokit/openapi@23.0.2", "@octokit/openapi/generated/api.github.com.json", 1223),
    "blockfrost": ("@blockfrost/openapi@0.1.93", "@blockfrost/openapi/openapi.yaml", 129),
    "directus": ("@directus/specs@15.2.0", "@directus/specs/dist/openapi.json", 136),
}
pytestmark = pytest.mark.slow


def spec_path(name: str) -> Path:
    """The spec named ``name`` of ``SPECS``: carried, or installed from npm."""
    package, relative, _ = SPECS[name]
    if package == "file":
        return DATA / relative
    with servers.infrastructure(f"the {name} spec from npm"):
        return servers.ensure_npm_file(package, relative)


@pytest.mark.parametrize("name", list(SPECS))
def test_the_first_run_on_the_unchanged_spec_passes(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = init_from_openapi(str(spec_path(name)), target=tmp_path / name)
    assert len(outcome.spec.tools) == SPECS[name][2]
    with pytest.raises(SystemExit) as stopped:
        main(["run", "-q", "--config", str(tmp_path / name / "qlab.yaml")])
    captured = capsys.readouterr()
    assert (stopped.value.code, captured.out) == (0, "PASS (exit 0)\n"), captured.err[-3000:]
