"""The HTTP API's routes, one module per concern."""
