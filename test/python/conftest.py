"""The suite caches what it compiles in a folder of its own, removed at the end, never in the
user's cache (`EMMY_CACHE_DIR`, which the suite's subprocesses inherit); a test that is about
the cache sets its own."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMMY_CACHE_DIR", str(tmp_path_factory.mktemp("emmy-cache")))
        yield
