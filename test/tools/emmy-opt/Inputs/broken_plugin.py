"""A pass plugin that fails to import, as one with a typo does."""

from emmy.passes.no_such_module import SomePass  # noqa: F401
