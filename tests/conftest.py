"""The suite's rules (a skip fails under CI, the run's record) are tests/suite_plugin.py's, loaded for every test by
pyproject's addopts. The real servers are the integration tests' (tests/integration/conftest.py): they stop when
those tests end."""
