"""skew_io.py: what models/skew.py and its model modules (spread.py,
race.py) share without importing one another: the error a bad input raises.
"""


class InputError(Exception):
    """A bad input file or value: exit 2 with one line."""
