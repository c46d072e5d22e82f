"""The client stubs `make client-stubs` generates from buf.gen.yaml (gen/ts,
gen/java, gen/kotlin) are complete and build: the TypeScript compiles under
tsc's strict mode and plays a two-player Yatzy game against the real stack
over gRPC alone; the Java messages and gRPC client stubs compile with javac
against Debian's protobuf and gRPC Java libraries. Swift's plugins need a
Swift toolchain, which this project's machines do not have; the Kotlin DSL
needs protobuf-kotlin, which Debian does not package (the README says how
a mobile team builds both)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import pytest
import yaml
from rodada.common.v1 import match_pb2
from rodada.platform.v1 import platform_pb2, platform_pb2_grpc

from services.core.tokens import Identity
from tests.protos import OURS, PROTOS, REPO, run, tool
from tools.stack import Stack
from tools.stubs import TEMPLATE, runnable

GEN = REPO / "gen"
FILES = [p.relative_to(PROTOS) for p in OURS]
# Where the generated Java compiles from: Debian's packages (make debian-tools).
JAVA_CLASSPATH = [
    "/usr/share/java/protobuf.jar",
    "/usr/share/java/grpc-api.jar",
    "/usr/share/java/grpc-stub.jar",
    "/usr/share/java/grpc-protobuf-lite.jar",
    "/usr/share/java/guava.jar",
    "/usr/share/java/jsr305.jar",
    "/usr/share/java/geronimo-annotation-1.3-spec.jar",  # javax.annotation.Generated
]
SWIFT_PLUGINS = {"protoc-gen-swift", "protoc-gen-grpc-swift-2"}


def generated(*parts: str) -> Path:
    path = GEN.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make client-stubs`")
    return path


def java_dir(proto: Path) -> Path:
    """rodada/<name>/v1/x.proto → the Java package's folder, app/rodada/<name>/v1."""
    return Path("app", *proto.parent.parts)


def test_every_file_has_its_stubs() -> None:
    """Each plugin of buf.gen.yaml that is installed here wrote its stubs for
    every proto file; only Swift's are left out."""
    _, left_out = runnable(yaml.safe_load(TEMPLATE.read_text()))
    assert set(left_out) <= SWIFT_PLUGINS, left_out
    for proto in FILES:
        stem = proto.with_suffix("").as_posix()
        assert generated("ts", f"{stem}_pb.ts").stat().st_size
        outer = "".join(part.capitalize() for part in proto.stem.split("_")) + "Proto.java"
        assert generated("java", *java_dir(proto).parts, outer).stat().st_size
        assert list(generated("kotlin", *java_dir(proto).parts).glob("*Kt.kt")), proto
    for proto, service in (("common/v1", "MatchService"), ("platform/v1", "PlatformService")):
        assert generated("java", "app", "rodada", *proto.split("/"), f"{service}Grpc.java")


def test_the_java_stubs_compile(tmp_path: Path) -> None:
    javac = shutil.which("javac")
    missing = [jar for jar in JAVA_CLASSPATH if not Path(jar).exists()]
    if javac is None or missing:
        pytest.fail(f"javac or {missing} missing: run `make debian-tools`")
    sources = sorted(str(p) for p in generated("java").rglob("*.java"))
    done = run(
        [javac, "-nowarn", "-d", str(tmp_path), "-cp", ":".join(JAVA_CLASSPATH), *sources], timeout=300
    )
    assert done.returncode == 0, done.stderr[-5000:]
    classes = tmp_path / "app" / "rodada"
    assert (classes / "platform" / "v1" / "PlatformServiceGrpc$PlatformServiceStub.class").exists()
    assert (classes / "common" / "v1" / "MatchServiceGrpc$MatchServiceStub.class").exists()
    assert (classes / "yatzy" / "v1" / "Action.class").exists()


def test_a_typescript_client_plays_yatzy_over_grpc(stack: Stack) -> None:
    """tests/protos/yatzy.ts, compiled with the generated TypeScript: sign-up,
    a guest, a table with an invite, a whole game and the guest's feed. The
    server agrees with what the client saw."""
    compiled = run([tool("tsc"), "-p", str(Path(__file__).parent)])
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    script = GEN / "ts-build" / "tests" / "protos" / "yatzy.js"
    address = stack.platform_grpc()
    played = run(["node", str(script), address], timeout=120)
    assert played.returncode == 0, played.stderr[-5000:]
    seen = json.loads(played.stdout)

    host = stack.token(Identity(seen["players"][0], "host", "user"))
    with grpc.insecure_channel(address) as channel:
        api = platform_pb2_grpc.PlatformServiceStub(channel)
        match = api.GetView(
            platform_pb2.GetViewRequest(table_id=seen["table_id"]),
            metadata=(("authorization", f"Bearer {host}"),),
            timeout=10,
        ).match
    assert match.status == match_pb2.MATCH_STATUS_FINISHED
    assert [s.user_id for s in match.seats] == seen["players"]
    assert list(match.scores) == seen["scores"] == seen["feed_final_scores"]
    assert list(match.result.ranks) == seen["ranks"]
    assert seen["turns"] == 26  # 13 rounds of the classic card, two players
    # The guest's feed ended by itself, on the final snapshot.
    assert seen["feed_kinds"][-1] == "snapshot" and seen["feed_final_status"] == "FINISHED"
    assert seen["feed_kinds"].count("snapshot") >= 26
