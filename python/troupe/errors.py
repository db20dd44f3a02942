"""Exception classes with TensorFlow's names (tf.errors), raised for troupe's status codes.

Every error a troupe call reports is an OpError subclass carrying the canonical code
(`error_code`, TensorFlow's numbers) and the message, which names the node, device, task or
address involved.
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed troupe operation: `error_code`, `message`, and the `op` involved if known."""

    def __init__(self, node_def, op, message, error_code):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message


def _make(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc})


CancelledError = _make("CancelledError", CANCELLED, "The step or session was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An error of no other kind.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An argument (a feed, a shape, a node) is invalid.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED,
                              "The call did not finish before its deadline.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "Something named was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "It already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED,
                              "Not permitted.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "A resource (memory, descriptors, a queue) ran out.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state for this call.")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "Past the end (e.g. a closed, empty queue).")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "Not implemented.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant broke.")
UnavailableError = _make("UnavailableError", UNAVAILABLE,
                         "A task or server cannot be reached.")
DataLossError = _make("DataLossError", DATA_LOSS, "Data was lost or corrupted.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED,
                             "The peer could not be authenticated.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code):
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    for base in cls.__mro__:
        for code, klass in _CODE_TO_CLASS.items():
            if klass is base:
                return code
    raise KeyError(cls)


def _error_from_code(code, message):
    """Called by the extension module: the exception for a troupe status."""
    return _CODE_TO_CLASS.get(code, UnknownError)(None, None, message)
