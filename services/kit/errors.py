"""Errors a service returns: a gRPC status plus a google.rpc.ErrorInfo whose
``reason`` is a stable code clients can switch on."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status


class ServiceError(Exception):
    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def to_status(self, domain: str) -> grpc.Status:
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=self.reason, domain=domain))
        return rpc_status.to_status(
            status_pb2.Status(code=self.code.value[0], message=self.message, details=[detail])
        )


def error_reason(error: grpc.aio.AioRpcError | grpc.RpcError) -> str | None:
    """The ErrorInfo reason of a failed call, for clients (the gateway, tests)."""
    status = rpc_status.from_call(error)
    if status is None:
        return None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.reason)
    return None


def unauthenticated(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAUTHENTICATED, "unauthenticated", message)


def not_found(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, "match_not_found", message)


def permission_denied(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.PERMISSION_DENIED, reason, message)


def invalid(reason: str, message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, reason, message)
