"""What the other modules share: the exception type."""
from ._core import MXPlugError

#: MXNet's name for the same exception, so that ``except mx.MXNetError`` keeps working.
MXNetError = MXPlugError
