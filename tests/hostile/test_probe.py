"""Rule (docs/security.md): an environment that lists ``allowed_hosts`` lists its own ``base_url``'s host, or
``qlab validate`` refuses it (where, and what to do): qlab sends that host requests before any case runs (the
readiness probe) and in every case. An environment without ``allowed_hosts`` is read-only: its ``base_url`` is
the one host it reads, the probe included, and no mutating request is ever sent.

On 6b179e1 the readiness probe contacted ``base_url`` even when its host was not in the environment's own
``allowed_hosts``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from hostile.project import api_project, run
from reliability.project import Op, qlab
from servers import CountingServer

OPS = [Op("listItems", "GET", "/items", "List the items")]


def test_an_environment_whose_base_url_is_outside_its_allowed_hosts_is_refused(tmp_path: Path) -> None:
    with CountingServer() as api:
        config = api_project(tmp_path / "p", api.url, OPS)
        data = yaml.safe_load(config.read_text())
        data["environments"]["api"]["allowed_hosts"] = ["dev.test", "*.staging.test"]
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        for command in ("validate", "run"):
            done = (
                run(config) if command == "run" else qlab(command, "--config", str(config), cwd=config.parent)
            )
            assert done.code == 2, done.console
            assert "$.environments.api.allowed_hosts: base_url's host '127.0.0.1:" in done.console
            assert "Add '127.0.0.1' to allowed_hosts, or remove allowed_hosts" in done.console
        assert api.count == 0, api.requests  # no probe, no case: nothing reached the host


def test_a_read_only_environment_is_probed_at_its_own_host(tmp_path: Path) -> None:
    with CountingServer() as api:
        config = api_project(tmp_path / "p", api.url, OPS)
        data = yaml.safe_load(config.read_text())
        del data["environments"]["api"]["allowed_hosts"]
        config.write_text(yaml.safe_dump(data, sort_keys=False))
        done = run(config)
        assert done.code == 0, done.console
        assert ("GET", "/") in api.requests and ("GET", "/items") in api.requests
