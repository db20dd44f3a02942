"""tf.python_io: TFRecord files, as TensorFlow 1.x writes and reads them.

Each record is framed as: uint64 length (little-endian), uint32 masked CRC-32C of those 8
bytes, the data, uint32 masked CRC-32C of the data (mask: ((crc >> 15) | (crc << 17)) +
0xa282ead8). The framing and CRCs are troupe's C++ (graph/core/tfrecord.hpp), as
event files use them. A record whose length or data does not match its CRC, or a file cut in
the middle of a record, is DataLossError naming the file and the byte offset.
Compression (TFRecordOptions) is not supported.
"""

import struct

from . import _troupe
from . import errors


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    def __init__(self, compression_type=None, **unused):
        if compression_type not in (None, "", TFRecordCompressionType.NONE):
            raise ValueError("TFRecordOptions: compression_type %r is not supported by troupe "
                             "(records are written uncompressed)" % (compression_type,))
        self.compression_type = TFRecordCompressionType.NONE


def _check_options(options):
    if options is not None and not isinstance(options, TFRecordOptions):
        TFRecordOptions(options)  # raises for a compression type


class TFRecordWriter:
    """Writes records to `path` (truncating it); close() or `with` makes them durable."""

    def __init__(self, path, options=None):
        _check_options(options)
        try:
            self._file = open(path, "wb")
        except OSError as e:
            raise errors.NotFoundError(None, None, "%s: %s" % (path, e.strerror)) from None
        self._path = path

    def write(self, record):
        if self._file is None:
            raise errors.FailedPreconditionError(None, None,
                                                 "TFRecordWriter for %s is closed" % self._path)
        if isinstance(record, str):
            record = record.encode("utf-8")
        self._file.write(_troupe.tfrecord_frame(bytes(record)))

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def tf_record_iterator(path, options=None):
    """Yields the records of the TFRecord file at `path`, checking every CRC."""
    _check_options(options)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise errors.NotFoundError(None, None, "%s: %s" % (path, e.strerror)) from None
    with f:
        offset = 0
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise errors.DataLossError(None, None, "truncated record at %d in %s"
                                           % (offset, path))
            length, length_crc = struct.unpack("<QI", header)
            if _troupe.masked_crc32c(header[:8]) != length_crc:
                raise errors.DataLossError(None, None, "corrupted record at %d in %s: the "
                                           "length's CRC does not match" % (offset, path))
            data = f.read(length)
            footer = f.read(4)
            if len(data) < length or len(footer) < 4:
                raise errors.DataLossError(None, None, "truncated record at %d in %s"
                                           % (offset, path))
            if _troupe.masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise errors.DataLossError(None, None, "corrupted record at %d in %s: the "
                                           "data's CRC does not match" % (offset, path))
            yield data
            offset += 16 + length
