"""File ops of TensorFlow 1.x's io_ops that input pipelines use: tf.matching_files
(tf.io.matching_files), and the queue readers (TFRecordReader, TextLineReader,
FixedLengthRecordReader, WholeFileReader), run by the task that reads the files."""

import collections

from . import dtypes as _dtypes
from . import ops as _ops
from .framework import convert_to_tensor


def matching_files(pattern, name=None):
    """The sorted names of the files matching glob `pattern` (a string, or a vector of them),
    as a string vector; empty where nothing matches."""
    pattern = convert_to_tensor(pattern, dtype=_dtypes.string, name="pattern")
    return _ops._make("MatchingFiles", [pattern], name=name or "MatchingFiles").outputs[0]


# --- the queue readers ---

ReaderReadResult = collections.namedtuple("ReaderRead", ["key", "value"])
ReaderReadUpToResult = collections.namedtuple("ReaderReadUpTo", ["keys", "values"])

class ReaderBase:
    """tf.ReaderBase: a reader that takes file names from a queue and returns their records one
    at a time, as (key, value) string scalars. Its state (the file it is reading, its counts)
    lives on the device it is placed on and is shared by the steps that use it."""

    def __init__(self, op_type, attrs, name):
        g = _ops.get_default_graph()
        self._graph = g
        self._reader_ref = _ops._make(op_type, [], attrs, name=name or op_type,
                                      graph=g).outputs[0]

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return False

    def _queue_ref(self, queue):
        ref = queue.queue_ref if isinstance(queue, _ops.QueueBase) else queue
        if not isinstance(ref, _ops.Tensor) or ref.dtype != _dtypes.string:
            raise TypeError("%s.read: queue must be a queue or its queue_ref, got %r"
                            % (type(self).__name__, queue))
        return ref

    def read(self, queue, name=None):
        """The next record: (key, value). Takes a file name from `queue` whenever the current
        file has no more; OutOfRangeError once the queue is closed and empty."""
        op = _ops._make("ReaderRead", [self._reader_ref, self._queue_ref(queue)],
                        name=name or "ReaderRead", graph=self._graph)
        return ReaderReadResult(op.outputs[0], op.outputs[1])

    def num_records_produced(self, name=None):
        return _ops._make("ReaderNumRecordsProduced", [self._reader_ref],
                          name=name or "ReaderNumRecordsProduced", graph=self._graph).outputs[0]

    def num_work_units_completed(self, name=None):
        return _ops._make("ReaderNumWorkUnitsCompleted", [self._reader_ref],
                          name=name or "ReaderNumWorkUnitsCompleted",
                          graph=self._graph).outputs[0]

    def reset(self, name=None):
        return _ops._make("ReaderReset", [self._reader_ref], name=name or "ReaderReset",
                          graph=self._graph)

    def read_up_to(self, queue, num_records, name=None):
        """Up to `num_records` records: (keys, values), string vectors. As TensorFlow's, a call
        returns fewer when the current file ends after at least one record; OutOfRangeError
        once the queue is closed and empty."""
        count = convert_to_tensor(num_records, dtype=_dtypes.int64, name="num_records")
        op = _ops._make("ReaderReadUpTo", [self._reader_ref, self._queue_ref(queue), count],
                        name=name or "ReaderReadUpTo", graph=self._graph)
        return ReaderReadUpToResult(op.outputs[0], op.outputs[1])

    def serialize_state(self, name=None):
        raise NotImplementedError("%s does not support serializing its state"
                                  % type(self).__name__)

    def restore_state(self, state, name=None):
        raise NotImplementedError("%s does not support restoring its state"
                                  % type(self).__name__)


class TFRecordReader(ReaderBase):
    """The records of TFRecord files; keys "<file>:<byte offset>"."""

    def __init__(self, name=None, options=None):
        from .python_io import TFRecordOptions
        compression = ""
        if options is not None:
            if not isinstance(options, TFRecordOptions):
                raise TypeError("TFRecordReader: options must be a TFRecordOptions, got %r"
                                % (options,))
            compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__("TFRecordReader", {"compression_type": compression}, name)


class TextLineReader(ReaderBase):
    """The lines of text files, without their newline; keys "<file>:<line>" (from 1)."""

    def __init__(self, skip_header_lines=None, name=None):
        skip = int(skip_header_lines or 0)
        if skip < 0:
            raise ValueError("TextLineReader: skip_header_lines must be >= 0, got %d" % skip)
        super().__init__("TextLineReader", {"skip_header_lines": skip}, name)


class FixedLengthRecordReader(ReaderBase):
    """Records of record_bytes each, after header_bytes and before footer_bytes of each file;
    keys "<file>:<n>" (from 0)."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        if hop_bytes:
            raise ValueError("FixedLengthRecordReader: hop_bytes is not supported by troupe")
        if encoding:
            raise ValueError("FixedLengthRecordReader: encoding (compressed files) is not "
                             "supported by troupe")
        attrs = {"record_bytes": int(record_bytes), "header_bytes": int(header_bytes or 0),
                 "footer_bytes": int(footer_bytes or 0)}
        if attrs["record_bytes"] <= 0 or attrs["header_bytes"] < 0 or attrs["footer_bytes"] < 0:
            raise ValueError("FixedLengthRecordReader: record_bytes must be > 0 and "
                             "header_bytes, footer_bytes >= 0; got %d, %d, %d"
                             % (attrs["record_bytes"], attrs["header_bytes"],
                                attrs["footer_bytes"]))
        super().__init__("FixedLengthRecordReader", attrs, name)


class WholeFileReader(ReaderBase):
    """Each file whole as one record; keys the file names."""

    def __init__(self, name=None):
        super().__init__("WholeFileReader", {}, name)
