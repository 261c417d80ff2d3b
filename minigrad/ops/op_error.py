"""OpError: an op refused the values it was given (shapes that do not fit, a dimension
named twice, an equation that does not match its operands).

PyTorch raises RuntimeError for these; minigrad raised ValueError before. OpError is
both, so `except RuntimeError` written for PyTorch and `except ValueError` written for
minigrad each catch it.
"""


class OpError(RuntimeError, ValueError):
    """An op's input values do not fit together; the message says which and how."""
