"""Arrays in a program's memory order: a tensor's `dim_order` says how its buffer is laid out
(channels-last images are [0, 2, 3, 1]). The .pte's bundled inputs, the host reference, the
generated reference files and a data set on the target all convert with these two."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


def to_layout(array: NDArray[Any], dim_order: Sequence[int] | None) -> NDArray[Any]:
    """The array in the program's memory order (dim_order), as the runtime sees the buffer."""
    array = np.asarray(array)
    order = list(dim_order or range(array.ndim))
    if len(order) != array.ndim:
        order = list(range(array.ndim))
    return np.ascontiguousarray(np.transpose(array, order))


def from_layout(flat: NDArray[Any], shape: Sequence[int], dim_order: Sequence[int] | None) -> NDArray[Any]:
    """to_layout's inverse: elements in memory (dim) order back in the logical shape."""
    order = list(dim_order or range(len(shape)))
    if len(order) != len(shape):
        order = list(range(len(shape)))
    return np.ascontiguousarray(np.transpose(flat.reshape([shape[d] for d in order]), np.argsort(order)))


def placed_dims(tensor: Any) -> list[int]:
    """A tensor's dims in memory order (its `dim_order()`), those of size 1 left out: they place no
    byte, so two tensors whose placed dims agree lie alike in memory."""
    return [int(d) for d in tensor.dim_order() if int(tensor.shape[d]) != 1]
