"""Rule: a spec's ``$ref`` reads only what the source may read. A spec fetched by URL never reads a local file;
a local spec reads files only inside the project folder (and its own folder), symbolic links resolved first;
another document by URL only with ``remote_refs: true``. A refused ``$ref`` is an ERROR (exit 2) that names the
``$ref``'s ``file:line:col`` and JSON path — in ``qlab build``, ``qlab run`` and ``qlab init --from-openapi``.

On 6b179e1 a spec fetched by URL read ``$ref: file:///…`` from the local disk (the value went to the remote
server and into files meant to be committed), and ``qlab build`` fetched any remote ``$ref``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hostile.project import github_output, run, spec_project
from hostile.server import HostileServer
from hostile.specs import api, ref, write_local
from reliability.project import qlab

CANARY = "qlab-canary-local-file-7f3e"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A local file outside every project folder, holding a canary."""
    path = tmp_path / "outside" / "secret.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"x": {"type": "string", "description": CANARY}}))
    return path


def _leaked(root: Path) -> list[str]:
    """Files under ``root`` (outputs, caches) that hold the canary."""
    files = (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    return [str(p) for p in files if CANARY.encode() in p.read_bytes()]


def _project_files(root: Path, files: dict[str, object]) -> Path:
    spec = write_local(root / "specs", files)
    return spec_project(root, str(spec.relative_to(root)))


def test_a_spec_fetched_by_url_never_reads_a_local_file(tmp_path: Path, hostile: HostileServer) -> None:
    config = spec_project(tmp_path / "p", hostile.spec("file-ref"))
    for command in ("build", "run"):
        done = qlab(command, "--config", str(config), cwd=config.parent)
        assert done.code == 2, done.console
        assert "openapi.json:1:" in done.console and "schema['$ref']" in done.console, done.console
        assert "a spec fetched by URL never reads local files" in done.console
        assert "root:" not in done.console  # nothing of /etc/passwd


def test_a_local_spec_never_reads_outside_the_project_folder(tmp_path: Path, secret_file: Path) -> None:
    for target in (f"file://{secret_file}#/x", str(secret_file) + "#/x", "../../outside/secret.json#/x"):
        root = tmp_path / f"p{len(list(tmp_path.iterdir()))}"
        config = _project_files(root, {"openapi.json": ref(target)})
        done = run(config)
        assert done.code == 2 and "outside the project folder" in done.console, (target, done.console)
        assert "specs/openapi.json:1:" in done.console and "schema['$ref']" in done.console, done.console
        assert github_output(config)["decision"] == "error"
        assert not _leaked(root), target


def test_a_symbolic_link_does_not_lead_out_of_the_project(tmp_path: Path, secret_file: Path) -> None:
    root = tmp_path / "p"
    config = _project_files(root, {"openapi.json": ref("common.json#/x")})
    (root / "specs" / "common.json").symlink_to(secret_file)
    done = qlab("build", "--config", str(config), cwd=root)
    assert done.code == 2 and "outside the project folder" in done.console, done.console
    assert not _leaked(root)


def test_a_local_spec_reads_the_files_beside_it_in_the_project(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "shared").mkdir(parents=True)
    (root / "shared" / "item.json").write_text(json.dumps({"Item": {"type": "object"}}))
    config = _project_files(root, {"openapi.json": ref("../shared/item.json#/Item")})
    done = qlab("build", "--config", str(config), cwd=root)
    assert done.code == 0, done.console


def test_a_remote_ref_needs_the_opt_in(tmp_path: Path, hostile: HostileServer) -> None:
    """Even beside the spec on its own server: fetching another document is the opt-in's to allow."""
    config = spec_project(tmp_path / "p", hostile.spec("relative-ref"))
    done = run(config)
    assert done.code == 2 and "remote $ref" in done.console and "remote_refs: true" in done.console
    assert github_output(config)["decision"] == "error"
    fetched = [s.path for s in hostile.requests() if "common.json" in s.path]
    assert fetched == [], "the refused document was fetched"
    allowed = spec_project(tmp_path / "q", hostile.spec("relative-ref"), source={"remote_refs": True})
    done = qlab("build", "--config", str(allowed), cwd=allowed.parent)
    assert done.code == 0, done.console


def test_a_local_spec_with_a_remote_ref_needs_the_opt_in_too(tmp_path: Path, hostile: HostileServer) -> None:
    root = tmp_path / "p"
    config = _project_files(root, {"openapi.json": ref(f"{hostile.url}/spec/relative-ref/common.json#/Item")})
    done = qlab("build", "--config", str(config), cwd=root)
    assert done.code == 2 and "remote $ref" in done.console, done.console
    data = yaml.safe_load(config.read_text())
    data["collection"]["sources"][0]["remote_refs"] = True
    config.write_text(yaml.safe_dump(data))
    assert qlab("build", "--config", str(config), cwd=root).code == 0


def test_init_refuses_a_url_spec_that_reads_a_local_file(tmp_path: Path, hostile: HostileServer) -> None:
    done = qlab("init", str(tmp_path / "new"), "--from-openapi", hostile.spec("file-ref"), cwd=tmp_path)
    assert done.code == 2 and "a spec fetched by URL never reads local files" in done.console, done.console
    assert "schema['$ref']" in done.console and not (tmp_path / "new" / "qlab.yaml").exists()


def test_init_fetches_remote_refs_only_when_allowed(tmp_path: Path, hostile: HostileServer) -> None:
    spec = hostile.spec("relative-ref")
    done = qlab("init", str(tmp_path / "a"), "--from-openapi", spec, "--offline", cwd=tmp_path)
    assert done.code == 2 and "remote $ref" in done.console, done.console
    done = qlab(
        "init", str(tmp_path / "b"), "--from-openapi", spec, "--offline", "--allow-remote-refs", cwd=tmp_path
    )
    assert done.code == 0, done.console
    written = yaml.safe_load((tmp_path / "b" / "qlab.yaml").read_text())
    assert written["collection"]["sources"][0]["remote_refs"] is True  # the next build reads it as init did


def test_an_mcp_tool_schema_refers_only_inside_itself(tmp_path: Path, secret_file: Path) -> None:
    tools = {"tools": [{"name": "t", "inputSchema": {"$ref": f"file://{secret_file}#/x"}}]}
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "tools.json").write_text(json.dumps(tools))
    config = spec_project(tmp_path / "p", "unused.json")
    data = yaml.safe_load(config.read_text())
    data["collection"]["sources"] = [{"name": "mcp", "mcp": "tools.json"}]
    config.write_text(yaml.safe_dump(data))
    done = qlab("build", "--config", str(config), cwd=config.parent)
    assert done.code == 2 and "may point only inside itself" in done.console, done.console


def test_the_spec_itself_is_still_read_where_qlab_yaml_names_it(tmp_path: Path) -> None:
    """The rule is about ``$ref``: a source outside the project folder, named by qlab.yaml, is read."""
    spec = write_local(tmp_path / "elsewhere", {"openapi.json": api()})
    config = spec_project(tmp_path / "p", str(spec))
    assert qlab("build", "--config", str(config), cwd=config.parent).code == 0
