"""Refused: the one error of every settings read and write (docs/install.md).

Here, below everything, because the homes a settings file is found under
(homes.py) refuse too, and no module should import merge code for an exception.
"""


class Refused(Exception):
    """The file's content is not a shape we can merge into safely: leave it alone."""
