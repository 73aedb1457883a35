"""The in-memory vector table behind exact dense search, and its snapshot file.

A :class:`VectorTable` holds, for one embedding model, every stored vector as one float32 matrix,
the same vectors quantized to int8 (one scale per row) for the fast first pass of dense search
(:mod:`mission_memory.stores.dense_scan`, docs/adr/0033), plus the per-row fields dense search filters on: the layer, the numeric filter columns (criticality,
time, as float64 like SQLite's REAL) and the named ones (mission, component, operator, access level…)
as integer codes into small vocabularies, and the record kind dense search groups by (docs/adr/0050). Which columns there are comes from the filter field table
(:mod:`mission_memory.stores.filters`). Filtering is then a few vectorised comparisons and scoring
one matrix-vector product.

Loading 100k vectors row by row from SQLite takes about a second, which a cold CLI query cannot
afford, so the table is also kept as a snapshot file next to the database: a JSON header followed
by the raw arrays, memory-mapped on load. The snapshot is derived state: it names the database
state it reflects (the vector-deletion counter and the highest vector row id), is used only when
that state is still current (rows added since are read from SQLite and appended), and is replaced
atomically, so a reader never sees a half-written file.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
import weakref
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mission_memory.stores.snapshot_integrity import (
    DATA_FILE_MODE,
    create_data_file,
    data_checked,
    make_data_folder,
)

__all__ = ["READ_ROWS_MIN_ROWS", "VectorTable", "quantize_rows"]

_MAGIC = b"MMVEC3\n"
_SUFFIX = "-v3.mmvec"
"""Format 3 adds the int8 matrix and its row scales; a format-2 file (another name) is never read.
A format-3 file without ``crc32`` in its header (written before the check) is rebuilt in place."""
_QUANTIZE_ROWS = 65_536
"""Rows quantized at a time, which bounds the temporary float32 copies to about 100 MB."""
_ALIGN = 64
READ_ROWS_MIN_ROWS = 200_000
"""From this many rows on, :meth:`VectorTable.float_rows` reads rows from the snapshot file."""


@dataclass
class VectorTable:
    """All vectors of one model with their filter fields, row-aligned and sorted by row id.

    Attributes:
        model_id: the embedding model the vectors belong to.
        deletions, max_rowid: the database state the table reflects.
        rowids: shape ``(n,)`` int64, ascending.
        matrix: shape ``(n, dim)`` float32, unit rows.
        quantized: shape ``(n, dim)`` int8, ``matrix`` rows scaled to use the range -127..127.
        scales: shape ``(n,)`` float32; ``quantized[i] * scales[i]`` approximates ``matrix[i]``.
        layer: shape ``(n,)`` int8 layer codes.
        numbers: per numeric column, shape ``(n,)`` float64.
        codes: per coded column, shape ``(n,)`` int32 indexes into ``vocab[column]`` (-1 for None).
        vocab: per coded column, the distinct values.
        kind: shape ``(n,)`` int8 record-kind codes into ``kind_names``, or None when not read
            (a snapshot written before docs/adr/0050; the SQLite cache then fills it in).
        kind_names: the record kinds, in code order.
    """

    model_id: str
    deletions: int
    max_rowid: int
    rowids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    quantized: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]
    layer: npt.NDArray[np.int8]
    numbers: dict[str, npt.NDArray[np.float64]]
    codes: dict[str, npt.NDArray[np.int32]]
    vocab: dict[str, list[str]] = field(default_factory=dict)
    kind: npt.NDArray[np.int8] | None = None
    kind_names: tuple[str, ...] = ()
    _kind_rows: dict[int, npt.NDArray[np.int64]] = field(default_factory=dict, repr=False, compare=False)
    _layer_rows: dict[int, npt.NDArray[np.int64]] = field(default_factory=dict, repr=False, compare=False)
    _matrix_file: _RowFile | None = field(default=None, repr=False, compare=False)

    @property
    def size(self) -> int:
        """Number of rows."""
        return int(self.rowids.shape[0])

    @property
    def columns(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The numeric and the coded column names."""
        return tuple(self.numbers), tuple(self.codes)

    def layer_rows(self, code: int) -> npt.NDArray[np.int64]:
        """Positions (not row ids) of the rows of layer ``code``, ascending; computed once per table."""
        rows = self._layer_rows.get(code)
        if rows is None:
            rows = self._layer_rows[code] = np.flatnonzero(self.layer == code)
        return rows

    def kind_rows(self, code: int) -> npt.NDArray[np.int64]:
        """Positions of the rows of record kind ``code``, ascending; computed once per table.

        Raises:
            ValueError: the table holds no kinds (:attr:`kind` is None).
        """
        if self.kind is None:
            raise ValueError(f"vector table of {self.model_id} holds no record kinds")
        rows = self._kind_rows.get(code)
        if rows is None:
            rows = self._kind_rows[code] = np.flatnonzero(self.kind == code)
        return rows

    def with_kinds(self, kind: npt.NDArray[np.int8], kind_names: Sequence[str]) -> VectorTable:
        """This table with its rows' record kinds (shape ``(n,)`` codes into ``kind_names``)."""
        return VectorTable(self.model_id, self.deletions, self.max_rowid, self.rowids, self.matrix, self.quantized,
                           self.scales, self.layer, self.numbers, self.codes, self.vocab, kind=kind,
                           kind_names=tuple(kind_names), _matrix_file=self._matrix_file)

    def float_rows(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The float32 rows at ``positions``, shape ``(len(positions), dim)``, a copy.

        For a table of at least :data:`READ_ROWS_MIN_ROWS` rows memory-mapped from a snapshot,
        the rows are read with one ``pread`` each from the file the table was loaded from (the
        descriptor opened then, so a snapshot replaced since cannot be read by mistake).
        Gathering a few hundred scattered rows of a memory-mapped matrix costs a page fault per
        row the process has not touched yet: at 1M rows, 720 rows took 3–16 ms that way against
        2–7 ms read. A smaller table soon has its pages mapped, and gathering is then cheaper
        (docs/adr/0049).
        """
        rows = self._matrix_file
        if rows is None or positions.shape[0] == 0 or self.size < READ_ROWS_MIN_ROWS:
            return np.asarray(self.matrix[positions], dtype=np.float32)
        return rows.read(positions)

    def code_of(self, column: str, value: str | None) -> int:
        """The code of ``value`` in ``column`` (-1 for None, -2 when the value never occurs)."""
        if value is None:
            return -1
        try:
            return self.vocab[column].index(value)
        except ValueError:
            return -2

    @classmethod
    def from_rows(
        cls,
        model_id: str,
        deletions: int,
        after: int,
        dim: int,
        rows: Sequence[Sequence[Any]],
        layer_codes: dict[str, int],
        numeric_columns: Sequence[str],
        coded_columns: Sequence[str],
        kind_names: Sequence[str] | None = None,
    ) -> VectorTable:
        """Build a table from SQLite rows ``(rowid, blob, layer, *numeric_columns, *coded_columns)``,
        ordered by rowid; ``after`` is the max row id when there are no rows. With ``kind_names``,
        each row ends with one more field, its record kind (one of ``kind_names``)."""
        n = len(rows)
        first_code = 3 + len(numeric_columns)
        kind_code = {name: i for i, name in enumerate(kind_names or ())}
        vocab: dict[str, list[str]] = {c: [] for c in coded_columns}
        index: dict[str, dict[str, int]] = {c: {} for c in coded_columns}
        codes = {c: np.empty(n, dtype=np.int32) for c in coded_columns}
        for i, row in enumerate(rows):
            for j, column in enumerate(coded_columns):
                value = row[first_code + j]
                if value is None:
                    codes[column][i] = -1
                    continue
                slot = index[column].get(value)
                if slot is None:
                    slot = index[column][value] = len(vocab[column])
                    vocab[column].append(value)
                codes[column][i] = slot
        matrix = (
            np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(n, dim)
            if n
            else np.zeros((0, dim), dtype=np.float32)
        )
        quantized, scales = quantize_rows(matrix)
        numbers = {
            column: np.fromiter((row[3 + j] for row in rows), dtype=np.float64, count=n)
            for j, column in enumerate(numeric_columns)
        }
        return cls(
            model_id=model_id,
            deletions=deletions,
            max_rowid=int(rows[-1][0]) if rows else after,
            rowids=np.fromiter((row[0] for row in rows), dtype=np.int64, count=n),
            matrix=matrix,
            quantized=quantized,
            scales=scales,
            layer=np.fromiter((layer_codes[row[2]] for row in rows), dtype=np.int8, count=n),
            numbers=numbers,
            codes=codes,
            vocab=vocab,
            kind=(
                None if kind_names is None
                else np.fromiter((kind_code[row[-1]] for row in rows), dtype=np.int8, count=n)
            ),
            kind_names=tuple(kind_names or ()),
        )

    def extended(self, more: VectorTable) -> VectorTable:
        """A new table: this one followed by ``more`` (whose row ids are all larger).

        An empty table has no vector size of its own (it may have been read before any vector
        existed, with dimension 0), so extending it gives ``more`` as it is.
        """
        if self.size == 0:
            return VectorTable(self.model_id, more.deletions, max(self.max_rowid, more.max_rowid), more.rowids,
                               more.matrix, more.quantized, more.scales, more.layer, more.numbers, more.codes,
                               more.vocab, kind=more.kind, kind_names=more.kind_names)
        if more.size == 0:
            return VectorTable(self.model_id, more.deletions, max(self.max_rowid, more.max_rowid), self.rowids,
                               self.matrix, self.quantized, self.scales, self.layer, self.numbers, self.codes,
                               self.vocab, kind=self.kind, kind_names=self.kind_names,
                               _matrix_file=self._matrix_file)
        vocab = {c: list(self.vocab[c]) for c in self.codes}
        codes = {}
        for column in self.codes:
            remap = np.empty(len(more.vocab[column]) + 1, dtype=np.int32)
            remap[-1] = -1  # index -1 keeps None as None
            for i, value in enumerate(more.vocab[column]):
                if value not in vocab[column]:
                    vocab[column].append(value)
                remap[i] = vocab[column].index(value)
            codes[column] = np.concatenate([self.codes[column], remap[more.codes[column]]])
        return VectorTable(
            model_id=self.model_id,
            deletions=more.deletions,
            max_rowid=more.max_rowid,
            rowids=np.concatenate([self.rowids, more.rowids]),
            matrix=np.concatenate([self.matrix, more.matrix]),
            quantized=np.concatenate([self.quantized, more.quantized]),
            scales=np.concatenate([self.scales, more.scales]),
            layer=np.concatenate([self.layer, more.layer]),
            numbers={c: np.concatenate([self.numbers[c], more.numbers[c]]) for c in self.numbers},
            codes=codes,
            vocab=vocab,
            kind=(
                np.concatenate([self.kind, more.kind])
                if self.kind is not None and more.kind is not None and self.kind_names == more.kind_names
                else None
            ),
            kind_names=self.kind_names,
        )

    # -- snapshot file ---------------------------------------------------------------------------

    @staticmethod
    def snapshot_path(folder: Path, model_id: str) -> Path:
        """Where the snapshot of ``model_id`` lives inside ``folder``."""
        return folder / f"{hashlib.sha256(model_id.encode()).hexdigest()[:16]}{_SUFFIX}"

    def save(self, path: Path, mode: int = DATA_FILE_MODE) -> None:
        """Write the table to ``path`` atomically (temp file, flushed to disk, then renamed), with the
        permission bits ``mode`` (the SQLite cache passes its database's, docs/adr/0055).

        Layout: magic, the header's length (8 bytes, little-endian), a JSON header (model id,
        counts, each array's dtype, shape and offset, ``data_size`` and the CRC-32 of the data),
        then the arrays, each padded to 64 bytes (from docs/adr/0050 on also a ``kind`` array and the
        header's ``kinds`` names; a reader before that ignores both). :meth:`load` checks size and CRC, so a damaged
        file of the right size is rebuilt, never searched (as the BM25 snapshot, docs/adr/0048).
        """
        arrays: dict[str, np.ndarray[Any, Any]] = {
            "rowids": self.rowids, "matrix": self.matrix, "quantized": self.quantized, "scales": self.scales,
            "layer": self.layer,
            **{f"num:{c}": self.numbers[c] for c in self.numbers},
            **{f"code:{c}": self.codes[c] for c in self.codes},
            **({"kind": self.kind} if self.kind is not None else {}),
        }
        layout: dict[str, dict[str, Any]] = {}
        offset = 0
        crc = 0
        for name, array in arrays.items():
            layout[name] = {"dtype": array.dtype.str, "shape": list(array.shape), "offset": offset}
            padded = -(-array.nbytes // _ALIGN) * _ALIGN
            crc = zlib.crc32(_bytes_of(array), crc)
            crc = zlib.crc32(b"\0" * (padded - array.nbytes), crc)
            offset += padded
        header = json.dumps({
            "model_id": self.model_id, "deletions": self.deletions, "max_rowid": self.max_rowid,
            "vocab": self.vocab, "arrays": layout, "numeric": list(self.numbers), "coded": list(self.codes),
            "kinds": list(self.kind_names), "data_size": offset, "crc32": crc,
        }, ensure_ascii=False).encode("utf-8")
        start = -(-(len(_MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
        make_data_folder(path.parent)
        # The database's mode, not mkstemp's fixed 0600: a store its owner shared with another
        # account (an archive, a service's store) has its snapshot read there too, not rebuilt in
        # every process of that account.
        tmp = path.parent / f".snapshot-{os.getpid()}-{uuid.uuid4().hex}.tmp"
        try:
            with create_data_file(tmp, mode) as out:
                out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
                out.write(b"\0" * (start - out.tell()))
                for array in arrays.values():
                    out.write(_bytes_of(array))
                    out.write(b"\0" * (-(-array.nbytes // _ALIGN) * _ALIGN - array.nbytes))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> VectorTable | None:
        """Memory-map a snapshot; None when it is missing, unreadable, truncated or damaged (wrong
        size, no or a wrong CRC-32: it is rebuilt then, never searched).

        The CRC is computed with plain reads of the file, not through the maps, so the check
        does not make the whole table part of this process's resident set, and once per file:
        a passed check is stamped beside it (:mod:`~mission_memory.stores.snapshot_integrity`);
        snapshot files are replaced, never changed in place, so the maps show the bytes that were
        checked.
        """
        try:
            with path.open("rb") as f:
                if f.read(len(_MAGIC)) != _MAGIC:
                    return None
                size = int.from_bytes(f.read(8), "little")
                header = json.loads(f.read(size).decode("utf-8"))
                start = -(-(len(_MAGIC) + 8 + size) // _ALIGN) * _ALIGN
                if start + int(header["data_size"]) != os.fstat(f.fileno()).st_size:
                    return None
                if not data_checked(f, path, start, int(header["crc32"])):
                    return None
                # Mapped through the open file, not the path: a snapshot renamed over the path since
                # the check (another process's save) is never mixed with this header.
                arrays = {}
                for name, spec in header["arrays"].items():
                    shape = tuple(spec["shape"])
                    if 0 in shape:
                        arrays[name] = np.zeros(shape, dtype=np.dtype(spec["dtype"]))
                    else:
                        arrays[name] = np.memmap(f, dtype=np.dtype(spec["dtype"]), mode="r",
                                                 offset=start + spec["offset"], shape=shape)
                matrix = arrays["matrix"]
                rows_file = (
                    _RowFile(os.dup(f.fileno()), start + header["arrays"]["matrix"]["offset"],
                             matrix.shape[1] * matrix.itemsize, matrix.shape[1])
                    if isinstance(matrix, np.memmap)
                    else None
                )
            return cls(
                model_id=header["model_id"],
                deletions=int(header["deletions"]),
                max_rowid=int(header["max_rowid"]),
                rowids=arrays["rowids"],
                matrix=arrays["matrix"],
                quantized=arrays["quantized"],
                scales=arrays["scales"],
                layer=arrays["layer"],
                numbers={c: arrays[f"num:{c}"] for c in header["numeric"]},
                codes={c: arrays[f"code:{c}"] for c in header["coded"]},
                vocab={c: list(header["vocab"][c]) for c in header["coded"]},
                kind=arrays.get("kind"),
                kind_names=tuple(header.get("kinds", ())) if "kind" in arrays else (),
                _matrix_file=rows_file,
            )
        except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError, UnicodeDecodeError):
            return None


def _bytes_of(array: npt.NDArray[Any]) -> memoryview:
    """The bytes of ``array`` in C order, as a flat view (a copy only when not contiguous)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data


class _RowFile:
    """An open descriptor on a snapshot file and where its float32 matrix starts; closed when collected."""

    def __init__(self, fd: int, offset: int, row_bytes: int, dim: int) -> None:
        self.fd = fd  # owned: closed when this object is collected
        self.offset, self.row_bytes, self.dim = offset, row_bytes, dim
        weakref.finalize(self, os.close, self.fd)

    def read(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        size, start, fd = self.row_bytes, self.offset, self.fd
        data = b"".join(os.pread(fd, size, start + p * size) for p in positions.tolist())
        if len(data) != size * positions.shape[0]:
            raise OSError(f"snapshot file ended early reading {positions.shape[0]} rows")
        return np.frombuffer(data, dtype=np.float32).reshape(positions.shape[0], self.dim).copy()


def quantize_rows(matrix: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Symmetric int8 quantization with one scale per row (docs/adr/0033).

    Args:
        matrix: shape ``(n, dim)`` float32.

    Returns:
        ``(quantized, scales)``: shape ``(n, dim)`` int8 in -127..127 and shape ``(n,)`` float32,
        so that ``quantized[i] * scales[i]`` is within ``scales[i] / 2`` of ``matrix[i]`` in every
        coordinate. An all-zero row gets scale 0 (and all-zero codes).
    """
    n = matrix.shape[0]
    quantized = np.empty(matrix.shape, dtype=np.int8)
    scales = np.empty(n, dtype=np.float32)
    for start in range(0, n, _QUANTIZE_ROWS):
        block = np.asarray(matrix[start : start + _QUANTIZE_ROWS], dtype=np.float32)
        peak = np.abs(block).max(axis=1) if block.shape[1] else np.zeros(block.shape[0], dtype=np.float32)
        scale = (peak / 127.0).astype(np.float32)
        safe = np.where(scale > 0, scale, np.float32(1.0))
        quantized[start : start + block.shape[0]] = np.clip(np.rint(block / safe[:, None]), -127, 127)
        scales[start : start + block.shape[0]] = scale
    return quantized, scales
