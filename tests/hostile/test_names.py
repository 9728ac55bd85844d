"""Rule: no name or shape of qlab.yaml that the schema accepts ends in an internal error, and ``qlab validate``
does not hang. A name of qlab.yaml (an environment, a suite, a gate, a source, an auth profile …) is at most 64
characters, by the schema; a YAML anchor bomb is stopped by what its aliases expand to, in values and in
characters of text, with the alias's location (exit 2).

On 6b179e1 a 250-character environment name passed validation and then broke the run (exit 3: its dev
server's log file name was too long), and aliases of a long string took ``qlab validate`` past gigabytes.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from hostile.project import api_project
from reliability.project import Op, fault_server_env, qlab
from servers import free_port


def test_a_name_longer_than_64_characters_is_refused_where_it_is(tmp_path: Path) -> None:
    name = "e" * 250
    port = free_port()
    ops = [Op("checkHealth", "GET", "/health", "Check the service health")]
    config = api_project(tmp_path / "p", f"http://127.0.0.1:{port}", ops)
    data = yaml.safe_load(config.read_text())
    data["environments"] = {name: fault_server_env(port)}
    data["suites"]["hostile"]["environment"] = name
    config.write_text(yaml.safe_dump(data, width=1000))
    for command in ("validate", "run"):
        done = qlab(command, "--config", str(config), cwd=config.parent)
        assert done.code == 2 and "internal error" not in done.console, done.console
        assert "qlab.yaml:" in done.console and "must be at most 64 characters long" in done.console


def test_validate_stops_an_anchor_bomb_of_long_strings(tmp_path: Path) -> None:
    leaf = "x" * 1_000_000
    config = tmp_path / "qlab.yaml"
    config.write_text(
        "version: 1\nproject: p\n"
        "collection: {sources: [{name: api, openapi: openapi.yaml}]}\n"
        f"suites:\n  s: {{mode: search, cases: [cases.yaml], description: &a {leaf}}}\n"
        f"  t: {{mode: search, cases: [cases.yaml], critical: [{', '.join(['*a'] * 3000)}]}}\n"
        "gates: [{name: search, stage: search, suites: [s, t]}]\n"
    )
    done = qlab("validate", "--config", str(config), cwd=tmp_path, timeout=120)
    assert done.code == 2, done.console
    assert "qlab.yaml:6:" in done.console and "$.suites.t.critical[1]" in done.console
    assert "aliases expand to more than 1048576 characters of text" in done.console
    assert done.peak_rss_mib < 300, done.peak_rss_mib
