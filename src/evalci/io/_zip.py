"""Reading zip archives (Inspect AI ``.eval`` logs) safely.

:class:`SafeZip` reads one member at a time after checking it: its declared
size against a limit (before anything is inflated), its name against the
other members' (two members under one name are refused, unless the caller
knows the format's rule for them), its encryption flag, and afterwards its
length and CRC-32. Members may be stored, deflated, bzip2, lzma or
Zstandard (zip method 93: what Inspect AI 0.3.285 writes): zstd through
:mod:`compression.zstd` from Python 3.14, else the ``backports.zstd`` package
(the same module, a core dependency below 3.14). Every fault is one
:class:`ValueError` naming the file and the member.
"""

from __future__ import annotations

import io
import struct
import sys
import zipfile
import zlib
from collections import Counter
from pathlib import Path

#: zip compression method 93 (APPNOTE 4.4.5): Zstandard
ZIP_ZSTANDARD = 93

#: the default `max_member_bytes`: 256 MiB inflated. A real log member is far
#: smaller (summaries and headers are kilobytes; one sample's transcript a few
#: MiB), and a 300 MiB member in a 0.3 MB file is a zip bomb, not a log.
MAX_MEMBER_BYTES = 2**28

# what zipfile raises on a damaged member, besides BadZipFile
_ZIP_FAULTS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError)


def _zstd():
    """The standard library's compression.zstd (3.14+), else backports.zstd."""
    if sys.version_info >= (3, 14):
        from compression import zstd  # type: ignore[import-not-found]
    else:
        from backports import zstd  # type: ignore[import-not-found]
    return zstd


class SafeZip:
    """A zip archive opened for checked reads of its members.

    Parameters
    ----------
    file : path
        The archive.
    max_member_bytes : int
        The largest inflated (or compressed) size a member may declare;
        a larger one is refused before it is read.
    option : str
        How the caller's users raise the limit (named in the error).
    """

    def __init__(
        self, file, max_member_bytes: int = MAX_MEMBER_BYTES, option: str = ""
    ):
        self.file = Path(file)
        self.limit = int(max_member_bytes)
        self.option = option or f"max_member_bytes= (now {self.limit:,})"
        try:
            self._zf = zipfile.ZipFile(self.file)
        except zipfile.BadZipFile:
            raise ValueError(
                f"{self.file} is not a zip archive; an Inspect .eval log is one "
                "(was it truncated?)."
            ) from None
        infos = self._zf.infolist()
        counts = Counter(i.filename for i in infos)
        #: member names that occur more than once (how many times each)
        self.duplicates = {n: c for n, c in counts.items() if c > 1}
        #: the last member under each name (zipfile's own rule)
        self.info = {i.filename: i for i in infos}
        #: member names in archive order, each once
        self.names = list(dict.fromkeys(i.filename for i in infos))

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc) -> None:
        self._zf.close()

    def _where(self, name: str) -> str:
        return f"{self.file}: member {name!r}"

    def check(self, name: str, last_wins: bool = False) -> zipfile.ZipInfo:
        """The member's ZipInfo once its name, flags and sizes pass."""
        if name in self.duplicates and not last_wins:
            raise ValueError(
                f"{self._where(name)} occurs {self.duplicates[name]} times in "
                "the archive; which copy counts is ambiguous, so the file is "
                "refused (rewrite it with one member per name)."
            )
        info = self.info[name]
        if info.flag_bits & 0x1:
            raise ValueError(
                f"{self._where(name)} is encrypted; an Inspect log never is: "
                "decrypt the archive first."
            )
        size = max(info.file_size, info.compress_size)
        if size > self.limit:
            raise ValueError(
                f"{self._where(name)} is {size:,} bytes, over the limit of "
                f"{self.limit:,} bytes read from one member; if the file is "
                f"trusted, raise the limit with {self.option}."
            )
        return info

    def read(self, name: str, last_wins: bool = False) -> bytes:
        """The member's bytes, inflated and checked (size, CRC-32)."""
        info = self.check(name, last_wins)
        try:
            if info.compress_type == ZIP_ZSTANDARD:
                data = self._read_zstd(info)
            else:
                with self._zf.open(info) as fh:
                    data = fh.read(info.file_size + 1)
        except NotImplementedError as e:
            raise ValueError(
                f"{self._where(name)} is compressed with a method this reader "
                f"cannot inflate ({e})."
            ) from None
        except _ZIP_FAULTS as e:
            raise ValueError(
                f"{self._where(name)} is damaged ({e}); the archive is corrupt "
                "or was cut short."
            ) from None
        if len(data) != info.file_size:
            raise ValueError(
                f"{self._where(name)} declares {info.file_size:,} bytes but "
                f"holds {'more' if len(data) > info.file_size else len(data)}"
                "; the archive is corrupt."
            )
        return data

    def _raw(self, info: zipfile.ZipInfo) -> bytes:
        """The member's compressed bytes, found through its local header."""
        with open(self.file, "rb") as fh:
            fh.seek(info.header_offset)
            head = fh.read(30)
            if len(head) != 30 or head[:4] != b"PK\x03\x04":
                raise zipfile.BadZipFile("bad local file header")
            n, m = struct.unpack("<HH", head[26:30])
            fh.seek(n + m, io.SEEK_CUR)
            raw = fh.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise EOFError("the member's data is cut short")
        return raw

    def _read_zstd(self, info: zipfile.ZipInfo) -> bytes:
        zstd = _zstd()
        raw = self._raw(info)
        try:
            # ZstdFile reads every frame: Inspect splits large members into
            # frames of at most 200 MiB input (inspect_ai _util/zipfile.py)
            with zstd.ZstdFile(io.BytesIO(raw)) as fh:
                data = fh.read(info.file_size + 1)
        except (zstd.ZstdError, EOFError) as e:
            raise zipfile.BadZipFile(f"zstd: {e}") from None
        if len(data) == info.file_size and zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
        return data
