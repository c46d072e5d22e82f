"""One error model for every process and both faces.

A refusal is a gRPC status code plus a stable ``reason`` (snake_case) clients
switch on, and a message for people. Over gRPC it travels as the status with
a ``google.rpc.ErrorInfo`` detail; over HTTP as ``{"error": {"code": reason,
"message": ...}}`` with the HTTP status derived from the gRPC code by the one
table below. A refusal that crosses a hop (game service → gateway → mobile
app or browser) keeps its code and reason.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

# gRPC code → HTTP status: the only place this is decided.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.INVALID_ARGUMENT: 422,
    grpc.StatusCode.OUT_OF_RANGE: 422,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.CANCELLED: 499,
}
_RETRY_AFTER_KEY = "retry_after_seconds"


class Refused(Exception):
    """A request refused, anywhere: the code, a stable reason, a message, and
    for rate limits and outages how long to wait before retrying."""

    def __init__(
        self, code: grpc.StatusCode, reason: str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.code, 500)

    def body(self) -> dict[str, dict[str, str]]:
        """The HTTP API's error envelope."""
        return {"error": {"code": self.reason, "message": self.message}}

    def to_status(self, domain: str) -> grpc.Status:
        metadata = {} if self.retry_after is None else {_RETRY_AFTER_KEY: f"{self.retry_after:.3f}"}
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=self.reason, domain=domain, metadata=metadata))
        return rpc_status.to_status(
            status_pb2.Status(code=self.code.value[0], message=self.message, details=[detail])
        )

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> Refused:
        """Another service's refusal, unchanged: same code, same reason."""
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        reason, retry_after = code.name.lower(), None
        status = rpc_status.from_call(error)
        for detail in status.details if status else ():
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                reason = str(info.reason)
                if _RETRY_AFTER_KEY in info.metadata:
                    retry_after = float(info.metadata[_RETRY_AFTER_KEY])
                break
        details = error.details() if hasattr(error, "details") else None
        return cls(code, reason, details or reason, retry_after)


def unauthenticated(message: str, reason: str = "unauthenticated") -> Refused:
    return Refused(grpc.StatusCode.UNAUTHENTICATED, reason, message)


def not_found(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.NOT_FOUND, reason, message)


def permission_denied(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.PERMISSION_DENIED, reason, message)


def invalid(reason: str, message: str) -> Refused:
    return Refused(grpc.StatusCode.INVALID_ARGUMENT, reason, message)


def conflict(reason: str, message: str) -> Refused:
    """A well-formed request the current state refuses (a full table, a turn
    that is someone else's)."""
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, reason, message)


def unavailable(message: str, reason: str = "unavailable", retry_after: float = 1.0) -> Refused:
    return Refused(grpc.StatusCode.UNAVAILABLE, reason, message, retry_after)


def stale(current_version: int) -> Refused:
    return Refused(
        grpc.StatusCode.ABORTED,
        "stale_version",
        f"the match is at version {current_version}; reload and act again",
    )


def error_reason(error: grpc.RpcError) -> str:
    """The ErrorInfo reason of a failed call (for clients and tests)."""
    return Refused.from_rpc_error(error).reason
