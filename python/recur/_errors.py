"""The package's one exception type."""


class RecurError(RuntimeError):
    """An error from the runtime or the compiler; the message names the tensor
    (or option), what was expected and what was given."""
