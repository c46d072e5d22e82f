"""buf.yaml holds: `buf lint` passes with the standard and comment rules,
its one exception (the games' enum values, which are JSON wire names) is
needed and no wider; `buf breaking` finds no wire or JSON break against the
previous commit (a branch: its merge base with main), and would find one.

BUF_BREAKING_AGAINST=<git revision> compares against another commit."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.protos import PROTOS, REPO, git, run, tool

CONFIG = REPO / "buf.yaml"


def buf(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return run([tool("buf"), *args], cwd=cwd)


def findings(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """buf's --error-format=json findings (one JSON object a line)."""
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


# -- lint ------------------------------------------------------------------------------


def test_lint_passes() -> None:
    done = buf("lint", "--error-format=json")
    assert done.returncode == 0 and not done.stdout, done.stdout + done.stderr


def test_the_lint_exception_is_needed_and_no_wider() -> None:
    """The only rule set aside is ENUM_VALUE_PREFIX, for the game files
    listed; without the exception buf reports that rule alone, in each of
    those files (none is listed for nothing)."""
    config = yaml.safe_load(CONFIG.read_text())
    lint = config["lint"]
    assert lint["use"] == ["STANDARD", "COMMENTS"] and "except" not in lint
    assert lint["ignore"] == ["protos/google"]  # vendored (below), not ours
    assert set(lint["ignore_only"]) == {"ENUM_VALUE_PREFIX"}
    listed = set(lint["ignore_only"]["ENUM_VALUE_PREFIX"])
    assert listed and all(re.fullmatch(r"protos/rodada/\w+/v1/\w+\.proto", path) for path in listed)

    without = {**config, "lint": {"use": lint["use"], "ignore": lint["ignore"]}}
    found = findings(buf("lint", "--error-format=json", "--config", json.dumps(without)))
    assert {f["type"] for f in found} == {"ENUM_VALUE_PREFIX"}
    assert {f["path"] for f in found} == listed


def test_the_vendored_http_annotations_are_the_wheels() -> None:
    """google/api/annotations.proto and http.proto, which the protos import
    for their HTTP bindings, are the googleapis-common-protos wheel's copies:
    the wheel's Python modules are what the gateway reads the bindings with."""
    from google.api import annotations_pb2

    wheel = Path(annotations_pb2.__file__).parent
    for name in ("annotations.proto", "http.proto"):
        assert (PROTOS / "google" / "api" / name).read_text() == (wheel / name).read_text(), name
    ours = {p.relative_to(PROTOS).as_posix() for p in PROTOS.rglob("*.proto")} - {
        p.relative_to(PROTOS).as_posix() for p in PROTOS.glob("rodada/**/*.proto")
    }
    assert ours == {"google/api/annotations.proto", "google/api/http.proto"}


# -- breaking --------------------------------------------------------------------------


def breaking_base() -> tuple[str, str]:
    """The commit to compare against, and what it is. Skips (saying why) when
    this checkout has none: not a git checkout, the first commit, or a
    shallow clone without the parent."""
    if git("rev-parse", "--git-dir") is None:
        pytest.skip("not a git checkout: no previous protos to compare with")
    asked = os.environ.get("BUF_BREAKING_AGAINST")
    if asked:
        commit = git("rev-parse", "--verify", "--quiet", f"{asked}^{{commit}}")
        if commit is None:
            pytest.fail(f"BUF_BREAKING_AGAINST={asked} is not a commit here")
        return commit, f"BUF_BREAKING_AGAINST={asked}"
    head = git("rev-parse", "HEAD")
    main = git("rev-parse", "--verify", "--quiet", "main^{commit}")
    if main and main != head:
        base = git("merge-base", "HEAD", "main")
        if base and base != head:
            return base, "the merge base with main"
    parent = git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}")
    if parent:
        return parent, "the previous commit"
    if git("rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("shallow clone: HEAD's parent is not here, so buf breaking has nothing to compare with")
    pytest.skip("HEAD is the first commit: buf breaking has nothing to compare with")


def extract_protos(commit: str, into: Path) -> Path | None:
    """protos/ as it was at ``commit``, under ``into``; None if it had none."""
    archive = subprocess.run(["git", "archive", commit, "protos"], cwd=REPO, capture_output=True, check=False)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "protos"


def test_no_wire_or_json_break_since_the_base(tmp_path: Path) -> None:
    commit, what = breaking_base()
    before = extract_protos(commit, tmp_path)
    if before is None:
        pytest.skip(f"{what} ({commit[:12]}) has no protos/ to compare with")
    done = buf("breaking", "--against", str(before), "--error-format=json")
    assert done.returncode == 0, f"breaking changes since {what} ({commit[:12]}):\n{done.stdout}{done.stderr}"


def mutated_copy(tmp_path: Path, path: str, old: str, new: str) -> Path:
    """A workspace like this one (buf.yaml, protos/) with one edit."""
    shutil.copy(CONFIG, tmp_path / CONFIG.name)
    shutil.copytree(PROTOS, tmp_path / "protos")
    target = tmp_path / path
    text = target.read_text()
    assert text.count(old) == 1, f"{path}: {old!r} should occur once"
    target.write_text(text.replace(old, new))
    return tmp_path


@pytest.mark.parametrize(
    "path,old,new,rule",
    [
        pytest.param(
            "protos/rodada/common/v1/match.proto",
            "  // The match's mode (GameInfo.modes[].name).\n  string mode = 16;\n",
            "",
            "FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED",
            id="a field deleted",
        ),
        pytest.param(
            "protos/rodada/yatzy/v1/yatzy.proto",
            "  SCANDINAVIAN = 2;",
            "  NORDIC = 2;",
            "ENUM_VALUE_SAME_NAME",
            id="an enum value renamed (its JSON name)",
        ),
        pytest.param(
            "protos/rodada/platform/v1/platform.proto",
            "  rpc GetPresence(GetPresenceRequest) returns (GetPresenceResponse) {\n"
            '    option (google.api.http) = {get: "/v1/tables/{table_id}/presence"};\n'
            "  }\n",
            "",
            "RPC_NO_DELETE",
            id="an RPC deleted",
        ),
        pytest.param(
            "protos/rodada/dudo/v1/dudo.proto",
            'option java_package = "app.rodada.dudo.v1";',
            'option java_package = "app.rodada.games.dudo.v1";',
            None,
            id="generated code moved (not a wire change)",
        ),
    ],
)
def test_breaking_tells_wire_breaks_from_the_rest(
    tmp_path: Path, path: str, old: str, new: str, rule: str | None
) -> None:
    workspace = mutated_copy(tmp_path, path, old, new)
    done = buf("breaking", "--against", str(PROTOS), "--error-format=json", cwd=workspace)
    if rule is None:
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        assert rule in {f["type"] for f in findings(done)}, done.stdout + done.stderr
