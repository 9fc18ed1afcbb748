"""MXNet's RecordIO files (``mx.recordio``): ``MXRecordIO`` reads and writes records in order,
``MXIndexedRecordIO`` by key through an index file; ``pack``/``unpack`` add and read MXNet's
image-record header (``IRHeader``) and ``pack_img``/``unpack_img`` encode and decode the image
(JPEG through libjpeg-turbo, PNG through libpng; BGR channel order, as OpenCV's ``cv2`` gives
MXNet). Files are byte-for-byte MXNet's: a ``.rec`` and ``.idx`` made by either are read by the
other.
"""
import numbers
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from . import _core
from .base import MXNetError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]


class MXRecordIO(object):
    """Reads (``flag='r'``) or writes (``flag='w'``) the records of the file ``uri`` in order.

    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write(b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXRecordIO('tmp.rec', 'r')
    >>> record.read()
    b'record_0'
    """

    def __init__(self, uri, flag):
        self.uri = str(uri)
        self.flag = flag
        self.handle = None
        self.pid = None
        self.is_open = False
        self.writable = None
        self.open()

    def open(self):
        """Opens the file: for writing it is created anew (emptied if it exists)."""
        if self.flag == "w":
            self.handle = _core.RecordWriter(self.uri)
            self.writable = True
        elif self.flag == "r":
            self.handle = _core.RecordReader(self.uri)
            self.writable = False
        else:
            raise ValueError("Invalid flag %s: MXRecordIO opens with 'r' or 'w'" % self.flag)
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        """Pickling closes the file; unpickling reopens it if it was open."""
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d["is_open"] = is_open
        d["handle"] = None
        return d

    def __setstate__(self, d):
        self.__dict__ = d
        is_open = d["is_open"]
        self.is_open = False
        if is_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """A handle belongs to the process that opened it; a reader reopens in another."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes: '%s' was opened by "
                                   "process %d; open it again in this one (an indexed reader's "
                                   "seek and read_idx do that themselves)" % (self.uri, self.pid))

    def close(self):
        """Closes the file (a writer flushes it)."""
        if not getattr(self, "is_open", False):
            return
        if self.writable:
            self.handle.close()
        self.handle = None
        self.is_open = False
        self.pid = None

    def reset(self):
        """Goes back to the first record; a writer empties the file."""
        self.close()
        self.open()

    def write(self, buf):
        """Appends ``buf`` (bytes) as a record."""
        assert self.writable
        self._check_pid(allow_reset=False)
        self.handle.write(bytes(buf))

    def read(self):
        """The next record's bytes, or None after the last."""
        assert not self.writable
        self._check_pid(allow_reset=False)
        return self.handle.read()


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with random access: ``idx_path`` holds one ``key<TAB>offset`` line per record;
    keys are converted with ``key_type``.

    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'w')
    >>> for i in range(5):
    ...     record.write_idx(i, b'record_%d' % i)
    >>> record.close()
    >>> record = mx.recordio.MXIndexedRecordIO('tmp.idx', 'tmp.rec', 'r')
    >>> record.read_idx(3)
    b'record_3'
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super(MXIndexedRecordIO, self).__init__(uri, flag)

    def open(self):
        super(MXIndexedRecordIO, self).open()
        self.idx = {}
        self.keys = []
        # Written whole at close, as the .rec beside it (Note [Atomic files]).
        self.fidx = _core.AtomicFile(self.idx_path) if self.writable else open(self.idx_path, self.flag)
        if not self.writable:
            for number, line in enumerate(iter(self.fidx.readline, ""), 1):
                fields = line.strip().split("\t")
                if len(fields) < 2 or not fields[1].isdigit():
                    raise ValueError("line %d of the index file '%s' is %r, expected 'key<TAB>offset'"
                                     % (number, self.idx_path, line))
                key = self.key_type(fields[0])
                self.idx[key] = int(fields[1])
                self.keys.append(key)

    def close(self):
        if not getattr(self, "is_open", False):
            return
        super(MXIndexedRecordIO, self).close()
        self.fidx.close()

    def __getstate__(self):
        d = super(MXIndexedRecordIO, self).__getstate__()
        d["fidx"] = None
        return d

    def seek(self, idx):
        """Moves the reader to the record with key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        self.handle.seek(self.idx[idx])

    def tell(self):
        """Where the writer's next record starts."""
        assert self.writable
        return self.handle.tell()

    def read_idx(self, idx):
        """The record with key ``idx``. An index that puts it at or past the end of the file is
        an error (a plain read() there is the end of the records, None)."""
        self.seek(idx)
        record = self.read()
        if record is None:
            raise MXNetError("the index file '%s' puts record %r at offset %d, but '%s' ends at offset %d"
                             % (self.idx_path, idx, self.idx[idx], self.uri, self.handle.size))
        return record

    def write_idx(self, idx, buf):
        """Appends ``buf`` as the record with key ``idx`` and indexes it."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""The header of an image record: ``flag`` (the number of float labels that follow it, 0 for the
one in ``label``), ``label`` (a number, or an array that ``pack`` stores after the header), ``id``
and ``id2`` (the example's id, high bits)."""

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """``s`` (bytes) behind an image-record header; an array label is stored after the header."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + s
    return struct.pack(_IR_FORMAT, *header) + s


def unpack(s):
    """The header and the bytes after it (and after its labels, which become ``header.label``)."""
    if len(s) < _IR_SIZE:
        raise ValueError("an image record holds at least its %d-byte header, this one has %d bytes"
                         % (_IR_SIZE, len(s)))
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """The header and the decoded image as a uint8 array: (height, width) gray or (height, width,
    3) in BGR order. ``iscolor`` as OpenCV's imdecode flag: -1 as stored, 0 gray, 1 color."""
    header, s = unpack(s)
    channels = 0 if iscolor < 0 else (1 if iscolor == 0 else 3)
    return header, _core.imdecode(s, channels, True)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encodes ``img`` (uint8, (height, width) gray or (height, width, 3) BGR) as ``img_fmt``
    ('.jpg' with ``quality`` 1-100, or '.png' with ``quality`` the compression level, clipped to
    0-9 as OpenCV does) and packs it behind ``header``."""
    if img_fmt.upper() == ".PNG":
        quality = min(max(int(quality), 0), 9)
    return pack(header, _core.imencode(np.asarray(img), img_fmt, int(quality), True))
