"""Refused: the one error of every settings read and write (docs/install.md), in a module of
its own so nothing imports merge code for an exception."""


class Refused(Exception):
    """The file's content is not a shape we can merge into safely: leave it alone."""
