"""acceptlab: what the Python side of acceptlab shares.

probes/ (the campaign and its studies), report/, models/, ci/ and tests/
import it by name, from the repository's top (`from acceptlab import
paths`); its modules:

  paths       the repository's top, the Python we run, and the command
              that runs one of our entry points as a module
"""

from acceptlab import paths

__all__ = ["paths"]
