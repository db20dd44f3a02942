"""tf.logging: the "troupe" logger (the hooks log through it), shown from set_verbosity's level."""

import logging as _logging
import sys as _sys

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("troupe")


def _ensure_handler():
    if not _logger.handlers:
        handler = _logging.StreamHandler(_sys.stderr)
        handler.setFormatter(_logging.Formatter("%(levelname)s:troupe:%(message)s"))
        _logger.addHandler(handler)


def set_verbosity(v):
    _ensure_handler()
    _logger.setLevel(v)


def get_verbosity():
    return _logger.getEffectiveLevel()


def debug(msg, *args):
    _logger.debug(msg, *args)


def info(msg, *args):
    _logger.info(msg, *args)


def warning(msg, *args):
    _logger.warning(msg, *args)


warn = warning


def error(msg, *args):
    _logger.error(msg, *args)
