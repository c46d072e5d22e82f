"""A terminal client that plays every game over the platform's gRPC face
(``rodada.platform.v1.PlatformService``) alone: the generated stubs, grpcio
and Textual, nothing of the server (a test holds it to that)."""
