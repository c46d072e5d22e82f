"""The platform's API, implemented once and served on both faces.

The protos are the API (protos/rodada/platform/v1): each servicer here
implements one of its services (PlatformService, SocialService,
CompetitionService) for the gRPC face (grpc.py), and the HTTP face calls
the same methods through one transcoder (http.py) driven by each RPC's
``google.api.http`` binding. What the servicers share — the caller, the
client's address, a game's options — is written once in face.py.
"""
