"""Dense layers whose every output is summed in one fixed order: the same numbers for a row, whatever the batch.

A BLAS matrix product picks its kernel and its split of the work by the
matrix sizes and the machine's thread count, so the same observation can get
logits that differ in the last bit when it is computed in a batch of 1, of
256, or with two threads; a near-tie between two moves then flips, and the
batched and the one-at-a-time tables play different games. Here each output
``out[b, j] = bias[j] + sum_k x[b, k] * weight[k, j]`` adds its terms in the
order of ``k``, one rounding per multiply and per add (no fused multiply-add),
whatever the rows around it: a row's result depends on that row alone, and is
the same on any machine with IEEE arithmetic. The loops run in the caller's
thread, so no BLAS threads fight the engine for the cores.

For speed the loops take four rows and four terms at a time: each weight row
is loaded once for four rows, and each partial sum stays in a register for
four terms, added in the same order as one term at a time. Terms that are
zero in all four rows are skipped: adding a zero product changes no sum.
"""

from __future__ import annotations

import numba
import numpy as np

ROWS_PER_PASS = 4
"""Rows that share each pass over the weights."""
TERMS_PER_PASS = 4
"""Terms of each sum added per pass over the outputs (in order: the result is that of one at a time)."""
LANES = 8
"""float32 values per vector register (AVX): `padded_layer` rounds a narrow layer's width up to a multiple."""


def padded_layer(weight: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(weight[K, J'], bias[J']) with zero columns added up to a multiple of `LANES` outputs.

    The loops over a layer's outputs then run in whole vectors: a head of 10 outputs costs less as 16.
    The real outputs are the first ``J``, their sums unchanged; the rest are zeros to be ignored.
    """
    extra = -weight.shape[1] % LANES
    return (np.ascontiguousarray(np.pad(weight, ((0, 0), (0, extra))), dtype=np.float32),
            np.ascontiguousarray(np.pad(bias, (0, extra)), dtype=np.float32))


@numba.njit(cache=True, nogil=True)
def dense_rows(x, weight, bias, relu, out):
    """``out[:] = x @ weight + bias`` (then ``max(., 0)`` with ``relu``), each sum taken in the order of ``k``.

    float32 throughout: x[B, K], weight[K, J], bias[J], out[B, J] (C-contiguous rows). For compiled
    callers; `dense` is the checked form. A term whose inputs are zero in every row of a pass adds
    nothing and is left out (a network's inputs and its ReLU activations are mostly zeros).
    """
    rows, inner = x.shape
    width = weight.shape[1]
    zero = np.float32(0.0)
    out[:] = zero
    terms = np.empty(inner, np.int64)
    start = 0
    while start < rows:
        block = min(ROWS_PER_PASS, rows - start)
        used = _pass_terms(x, start, block, terms)
        if block == ROWS_PER_PASS:
            _add_four_rows(x, weight, out, terms, start, used)
        else:
            for row in range(start, start + block):
                _add_one_row(x, weight, out, terms, row, used)
        start += block
    for row in range(rows):
        a = out[row]
        for j in range(width):
            value = a[j] + bias[j]
            a[j] = zero if relu and not value > zero else value


@numba.njit(cache=True, nogil=True, inline="always")
def _pass_terms(x, start, block, terms):
    """Write into ``terms`` the ``k`` whose input is nonzero in some row of the pass (the others add nothing to
    its sums); how many there are."""
    zero = np.float32(0.0)
    used = 0
    for k in range(x.shape[1]):
        for row in range(start, start + block):
            if x[row, k] != zero:
                terms[used] = k
                used += 1
                break
    return used


@numba.njit(cache=True, nogil=True, inline="always")
def _add_four_rows(x, weight, out, terms, start, used):
    """Add the pass's ``used`` terms to ``out``'s four rows from ``start``, each weight row loaded once for four."""
    width = weight.shape[1]
    grouped = used - used % TERMS_PER_PASS
    a, b, c, d = out[start], out[start + 1], out[start + 2], out[start + 3]
    for t in range(0, grouped, TERMS_PER_PASS):
        k0, k1, k2, k3 = terms[t], terms[t + 1], terms[t + 2], terms[t + 3]
        a0, a1, a2, a3 = x[start, k0], x[start, k1], x[start, k2], x[start, k3]
        b0, b1, b2, b3 = x[start + 1, k0], x[start + 1, k1], x[start + 1, k2], x[start + 1, k3]
        c0, c1, c2, c3 = x[start + 2, k0], x[start + 2, k1], x[start + 2, k2], x[start + 2, k3]
        d0, d1, d2, d3 = x[start + 3, k0], x[start + 3, k1], x[start + 3, k2], x[start + 3, k3]
        w0, w1, w2, w3 = weight[k0], weight[k1], weight[k2], weight[k3]
        for j in range(width):
            v0, v1, v2, v3 = w0[j], w1[j], w2[j], w3[j]
            a[j] = (((a[j] + a0 * v0) + a1 * v1) + a2 * v2) + a3 * v3
            b[j] = (((b[j] + b0 * v0) + b1 * v1) + b2 * v2) + b3 * v3
            c[j] = (((c[j] + c0 * v0) + c1 * v1) + c2 * v2) + c3 * v3
            d[j] = (((d[j] + d0 * v0) + d1 * v1) + d2 * v2) + d3 * v3
    for t in range(grouped, used):
        k0 = terms[t]
        a0, b0, c0, d0 = x[start, k0], x[start + 1, k0], x[start + 2, k0], x[start + 3, k0]
        w0 = weight[k0]
        for j in range(width):
            v0 = w0[j]
            a[j] += a0 * v0
            b[j] += b0 * v0
            c[j] += c0 * v0
            d[j] += d0 * v0


@numba.njit(cache=True, nogil=True, inline="always")
def _add_one_row(x, weight, out, terms, row, used):
    """Add the pass's ``used`` terms to ``out[row]`` alone: a last pass has fewer than four rows."""
    width = weight.shape[1]
    grouped = used - used % TERMS_PER_PASS
    a = out[row]
    for t in range(0, grouped, TERMS_PER_PASS):
        k0, k1, k2, k3 = terms[t], terms[t + 1], terms[t + 2], terms[t + 3]
        a0, a1, a2, a3 = x[row, k0], x[row, k1], x[row, k2], x[row, k3]
        w0, w1, w2, w3 = weight[k0], weight[k1], weight[k2], weight[k3]
        for j in range(width):
            a[j] = (((a[j] + a0 * w0[j]) + a1 * w1[j]) + a2 * w2[j]) + a3 * w3[j]
    for t in range(grouped, used):
        a0 = x[row, terms[t]]
        w0 = weight[terms[t]]
        for j in range(width):
            a[j] += a0 * w0[j]


def dense(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None, *, relu: bool = False,
          out: np.ndarray | None = None) -> np.ndarray:
    """float32[B, J]: ``x @ weight + bias`` (ReLU'd with ``relu``) for x[B, K] and weight[K, J], batch-invariant.

    ``bias`` None adds nothing; ``out`` (float32[B, J], C-contiguous) receives the result when given.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    weight = np.ascontiguousarray(weight, dtype=np.float32)
    if x.ndim != 2 or weight.ndim != 2 or x.shape[1] != weight.shape[0]:
        raise ValueError(f"dense needs x[B, K] and weight[K, J], got shapes {x.shape} and {weight.shape}")
    width = weight.shape[1]
    bias = np.zeros(width, np.float32) if bias is None else np.ascontiguousarray(bias, dtype=np.float32)
    if bias.shape != (width,):
        raise ValueError(f"dense's bias must have {width} entries, got shape {bias.shape}")
    if out is None:
        out = np.empty((x.shape[0], width), np.float32)
    elif out.shape != (x.shape[0], width) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"dense's out must be C-contiguous float32 of shape {(x.shape[0], width)}, got "
                         f"{out.dtype} {out.shape}")
    dense_rows(x, weight, bias, bool(relu), out)
    return out
