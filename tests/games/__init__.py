"""Games that exist only for the tests (GAME_PACKAGES=services,tests.games)."""
