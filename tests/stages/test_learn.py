"""The learn stage on a real run: what shadow rank says of each case reaches the case and the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.builders import make_project
from qlab.cli import main

LEARN_GATE = "  - name: learn\n    stage: learn\n"


def test_a_miss_a_pending_alias_would_fix_improves_in_shadow_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The troubleshooting row "results improve in shadow only" hung on a reason nothing emitted: the case that
    fails in the run and hits in shadow rank with the pending alias now carries it, and the summary gives the
    hint (the proposal is not promoted until a person accepts it)."""
    config = make_project(tmp_path, aliases="{}\n")
    config.write_text(config.read_text().replace("learning:\n", LEARN_GATE + "learning:\n"), encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["run", "--config", str(config), "-q"])
    assert done.value.code == 1, capsys.readouterr()
    result = json.loads((tmp_path / ".qlab" / "out" / "result.json").read_text())
    (miss,) = [c for c in result["cases"] if c["case_id"] == "s-parcel"]
    assert miss["status"] == "failed"
    shadow = miss["learning"]["shadow"]
    assert shadow["reason"] == "improves_in_shadow_only" and shadow["suggestions"][0].startswith("sg-")
    summary = (tmp_path / ".qlab" / "out" / "summary.md").read_text(encoding="utf-8")
    assert "| `improves_in_shadow_only` | 1 | learn | Results improve in shadow only" in summary
