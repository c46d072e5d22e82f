"""Server reflection as both grpc.reflection.v1 (what current tools ask
first: grpcurl, Postman, grpcui, buf curl) and grpc.reflection.v1alpha (what
older ones know). grpcio-reflection serves only v1alpha. v1's messages are
v1alpha's, field for field, under another package, so the same bytes answer
both: v1 is the library's own servicer registered under v1's name. v1's
descriptor (v1alpha's, renamed) joins the default pool, so reflection
describes itself in both versions."""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1_SERVICE = f"{V1_PACKAGE}.ServerReflection"
V1ALPHA_SERVICE: str = reflection.SERVICE_NAME
SERVICE_NAMES = (V1_SERVICE, V1ALPHA_SERVICE)


def _v1_file() -> descriptor_pb2.FileDescriptorProto:
    """v1alpha's reflection.proto with v1's package and file name."""
    file = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    old = f".{file.package}."
    file.name, file.package = V1_FILE, V1_PACKAGE
    file.options.Clear()  # v1alpha's java_package and the like
    for message in file.message_type:
        for field in message.field:
            if field.HasField("type_name"):  # messages and enums only
                field.type_name = field.type_name.replace(old, f".{V1_PACKAGE}.")
    for service in file.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, f".{V1_PACKAGE}.")
            method.output_type = method.output_type.replace(old, f".{V1_PACKAGE}.")
    return file


def _describe_v1(pool: descriptor_pool.DescriptorPool) -> None:
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.Add(_v1_file())


def enable(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection (both versions) for ``service_names`` and itself."""
    names = (*service_names, *SERVICE_NAMES)
    _describe_v1(descriptor_pool.Default())
    servicer = reflection.aio.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE, {"ServerReflectionInfo": handler}),)
    )
