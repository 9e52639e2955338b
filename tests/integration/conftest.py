from tests.support.static_files import plain_static_files  # noqa: F401
