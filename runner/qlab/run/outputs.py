"""Where a run's outputs go and how they are written: the result JSON, the JUnit XML and the Markdown summary,
each atomically, in the config's output folder (``output:`` in qlab.yaml, ``--out``/``--junit`` override).

A shard writes ``qlab-shard-<i>-of-<N>.json`` (+ ``junit-shard-…xml``, ``summary-shard-…md``) so the files of a
matrix never clash when a merge job downloads them into one folder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.atomic import write_atomic
from qlab.errors import InputError
from qlab.project.model import Config
from qlab.report import junit, markdown
from qlab.run.artifact import chunks
from qlab.run.shard import ShardSpec


@dataclass(frozen=True, slots=True)
class OutputPaths:
    result: Path
    junit: Path
    summary: Path

    def links(self) -> dict[str, str]:
        """Artifact links for the summary, relative to the summary's folder."""
        base = self.summary.parent
        return {
            "result": _rel(self.result, base),
            "junit": _rel(self.junit, base),
            "summary": _rel(self.summary, base),
        }


def _rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def output_paths(
    config: Config,
    *,
    out_dir: str | Path | None = None,
    junit_path: str | Path | None = None,
    shard: ShardSpec | None = None,
) -> OutputPaths:
    """The output files of a run: ``out_dir`` (relative to the working directory) or the config's output dir
    (relative to qlab.yaml)."""
    folder = Path(out_dir) if out_dir is not None else Path(config.path).parent / config.output.dir
    if shard is not None:
        label = shard.label
        return OutputPaths(
            result=folder / f"qlab-shard-{label}.json",
            junit=Path(junit_path) if junit_path else folder / f"junit-shard-{label}.xml",
            summary=folder / f"summary-shard-{label}.md",
        )
    return OutputPaths(
        result=folder / config.output.result,
        junit=Path(junit_path) if junit_path else folder / config.output.junit,
        summary=folder / config.output.summary,
    )


def prepare(paths: OutputPaths) -> None:
    """Create the output folders before any case runs, so a bad ``--out``/``--junit`` is an InputError (exit 2)
    up front, not an error after the whole run."""
    for folder in dict.fromkeys(p.parent for p in (paths.result, paths.junit, paths.summary)):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"{folder}: cannot create the output folder: {exc.strerror or exc}; check --out, --junit and "
                "output.dir in qlab.yaml"
            ) from None


def write_file(path: Path, text: str | Iterable[str]) -> Path:
    """``write_atomic``, with a file system refusal (a file where a folder should be, no space, no permission)
    reported as an InputError naming the file."""
    try:
        return write_atomic(path, text)
    except OSError as exc:
        raise InputError(
            f"{path}: cannot be written: {exc.strerror or exc}; check --out, --junit and output.dir in qlab.yaml"
        ) from None


def write_outputs(artifact: Mapping[str, Any], paths: OutputPaths) -> list[Path]:
    """Write the result, JUnit and summary atomically; returns the paths written."""
    write_file(paths.result, chunks(artifact))
    write_file(paths.junit, junit.chunks(artifact))
    write_file(paths.summary, markdown.render(artifact, links=paths.links()))
    return [paths.result, paths.junit, paths.summary]


def temp_paths(folder: Path) -> OutputPaths:
    return OutputPaths(folder / "result.json", folder / "junit.xml", folder / "summary.md")
