"""Every proto file names its generated code for each mobile language, one
way: Java/Kotlin package app.rodada.<package> (one class per message, the
file's outer class <File>Proto), a Swift and Objective-C prefix of its own,
the C# namespace and the Go package."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from google.protobuf.descriptor import FileDescriptor

from tests.protos import OURS, PROTOS

FILES = OURS


def descriptor(path: Path) -> FileDescriptor:
    """The file's descriptor, from its generated Python module."""
    module = path.relative_to(PROTOS).with_suffix("").as_posix().replace("/", ".") + "_pb2"
    found: FileDescriptor = importlib.import_module(module).DESCRIPTOR
    return found


def pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_package_options(path: Path) -> None:
    file = descriptor(path)
    options = file.GetOptions()
    package = file.package  # rodada.<name>.v1
    _, name, version = package.split(".")
    assert options.java_package == f"app.{package}"
    assert options.java_multiple_files
    assert options.java_outer_classname == pascal(path.stem) + "Proto"
    assert options.csharp_namespace == ".".join(pascal(part) for part in package.split("."))
    assert options.go_package == f"rodada/{name}/{version};{name.replace('_', '')}{version}"
    assert options.swift_prefix == options.objc_class_prefix
    # Apple keeps two-letter prefixes for itself: three, R for Rodada.
    assert re.fullmatch(r"R[A-Z]{2}", options.objc_class_prefix), options.objc_class_prefix


def test_each_package_has_its_own_prefix() -> None:
    prefixes = {descriptor(path).package: descriptor(path).GetOptions().objc_class_prefix for path in FILES}
    assert len(set(prefixes.values())) == len(prefixes), prefixes
