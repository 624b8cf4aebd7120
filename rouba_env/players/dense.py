"""Dense layers whose every output is summed in one fixed order: the same numbers for a row, whatever the batch.

A BLAS matrix product picks its kernel and its split of the work by the
matrix sizes and the machine's thread count, so the same observation can get
logits that differ in the last bit when it is computed in a batch of 1, of
256, or with two threads; a near-tie between two moves then flips, and the
batched and the one-at-a-time tables play different games. Here each output
``out[b, j] = bias[j] + sum_k x[b, k] * weight[k, j]`` adds its terms in the
order of ``k``, one rounding per multiply and per add, whatever the rows around
it: a row's result depends on that row alone. The loops run in this thread
(no BLAS threads to fight the engine for the cores), four rows at a time so
that each weight row is loaded once for four of them.
"""

from __future__ import annotations

import numba
import numpy as np

ROWS_PER_PASS = 4
"""Rows that share each pass over the weights (the arithmetic of a row is the same however they are grouped)."""
NARROW_WIDTH = 16
"""Layers with fewer outputs than this (a policy head, say) run `_narrow_dense_into`, vectorized over rows."""
ROWS_PER_BLOCK = 64
"""Rows a narrow layer transposes and sums at once (a block's work arrays stay in the first-level cache)."""


@numba.njit(cache=True, nogil=True)
def _dense_into(x, weight, bias, relu, out):
    """``out[:] = x @ weight + bias`` (then ``max(., 0)`` with ``relu``), each sum taken in the order of ``k``.

    float32 throughout: x[B, K], weight[K, J], bias[J], out[B, J]. A term whose four rows' inputs are all
    zero adds nothing to any of them and is skipped (an observation is mostly zeros).
    """
    rows, inner = x.shape
    width = weight.shape[1]
    out[:] = np.float32(0.0)
    start = 0
    while start + ROWS_PER_PASS <= rows:
        acc0, acc1, acc2, acc3 = out[start], out[start + 1], out[start + 2], out[start + 3]
        for k in range(inner):
            x0, x1, x2, x3 = x[start, k], x[start + 1, k], x[start + 2, k], x[start + 3, k]
            if x0 == 0.0 and x1 == 0.0 and x2 == 0.0 and x3 == 0.0:
                continue
            row = weight[k]
            for j in range(width):
                w = row[j]
                acc0[j] += x0 * w
                acc1[j] += x1 * w
                acc2[j] += x2 * w
                acc3[j] += x3 * w
        start += ROWS_PER_PASS
    for b in range(start, rows):
        acc = out[b]
        for k in range(inner):
            xk = x[b, k]
            if xk == 0.0:
                continue
            row = weight[k]
            for j in range(width):
                acc[j] += xk * row[j]
    zero = np.float32(0.0)
    for b in range(rows):
        acc = out[b]
        for j in range(width):
            value = acc[j] + bias[j]
            acc[j] = zero if relu and not value > zero else value


@numba.njit(cache=True, nogil=True)
def _narrow_dense_into(x, weight, bias, relu, out):
    """`_dense_into` for a layer of few outputs: the same sums in the same order of ``k``, computed for a
    block of rows at once (rows transposed into columns), which vectorizes where a row's few outputs cannot."""
    rows, inner = x.shape
    width = weight.shape[1]
    block = min(ROWS_PER_BLOCK, rows)
    columns = np.empty((inner, block), np.float32)
    sums = np.empty((width, block), np.float32)
    zero = np.float32(0.0)
    for start in range(0, rows, block):
        count = min(block, rows - start)
        for r in range(count):
            for k in range(inner):
                columns[k, r] = x[start + r, k]
        sums[:, :count] = zero
        for k in range(inner):
            column = columns[k]
            for j in range(width):
                w = weight[k, j]
                total = sums[j]
                for r in range(count):
                    total[r] += column[r] * w
        for r in range(count):
            row = out[start + r]
            for j in range(width):
                value = sums[j, r] + bias[j]
                row[j] = zero if relu and not value > zero else value


@numba.njit(cache=True, nogil=True)
def dense_rows(x, weight, bias, relu, out):
    """`dense` for compiled callers: the same kernels, chosen by the layer's width alone."""
    if weight.shape[1] < NARROW_WIDTH:
        _narrow_dense_into(x, weight, bias, relu, out)
    else:
        _dense_into(x, weight, bias, relu, out)


def dense(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None, relu: bool = False,
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
    if out is None:
        out = np.empty((x.shape[0], width), np.float32)
    elif out.shape != (x.shape[0], width) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"dense's out must be C-contiguous float32 of shape {(x.shape[0], width)}, got "
                         f"{out.dtype} {out.shape}")
    dense_rows(x, weight, bias, bool(relu), out)
    return out
