"""The sizes and layouts the plan makes for the kernels the backend calls, asked of the C the firmware
links (kernels/nn/cmx_nn_layout.c), as CMSIS-NN's Python bindings ask its C for buffer sizes: that
file is plain C on integers, built for this machine on first use (common/host_library.py) and called
through ctypes. So no scratch formula or weight layout of a kernel is written in Python.

The packers run in C; reading a plan's bytes back (host_run.py's bit-exact reference) runs them too:
each packer, given every input value's index (as digits small enough to be values), says which input
value each packed value is (`_sources`), and that map read backwards is the unpacker."""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import re
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from cmx_gen.common import host_library
from cmx_gen.common.paths import KERNELS_DIR

SOURCE = KERNELS_DIR / "nn" / "cmx_nn_layout.c"
_I32 = ctypes.c_int32
_P = ctypes.c_void_p
# each exported function: (result, arguments)
_SIGNATURES: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "cmx_conv_row_s8_row_bytes": (_I32, (_P,)),
    "cmx_conv_row_s8_chunk_bytes": (_I32, (_P,)),
    "cmx_conv_row_s8_scratch_bytes": (_I32, (_P,)),
    "cmx_conv_row_s8_triples": (_I32, (_P,)),
    "cmx_conv_row_s8_weights": (None, (_P, _P, _P)),
    "cmx_conv_row_s8_constants_words": (_I32, (_I32,)),
    "cmx_conv_row_s8_constants": (None, (_P, _P, _P, _P, _P)),
    "cmx_conv_row_s8_constants_read": (None, (_I32, _P, _P, _P, _P)),
    "cmx_dw3x3_band_scratch_bytes": (_I32, (_I32,) * 5),
    "cmx_dw3x3_band_rows": (_I32, (_I32,) * 3),
    "cmx_dw3x3_planar_path": (ctypes.c_int, (_I32,) * 3),
    "cmx_conv_helium_s8_field_bytes": (_I32, (_I32,) * 7),
    "cmx_fully_connected_s8_layout": (None, (_I32, _I32, _I32, _P, _P)),
    "cmx_fully_connected_s8_layout_bytes": (_I32, (_I32,) * 3),
    "cmx_fully_connected_s4_weights": (None, (_I32, _I32, _P, _P)),
    "cmx_fully_connected_s4_weight_bytes": (_I32, (_I32,) * 2),
    "cmx_conv_helium_s8_constants": (None, (_I32, _P, _P, _P, _P)),
    "cmx_lstm_scratch_bytes": (ctypes.c_int64, (_I32,) * 6),
    "cmx_gru_scratch_bytes": (_I32, (_I32,)),
    "cmx_bmm_scratch_bytes": (ctypes.c_int64, (_I32,) * 5),
}


class RowGeometry(Protocol):
    """A convolution read as rows (own_kernels.RowGeometry): a dataclass whose fields are members of
    cmx_conv_row_params, by the same names."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def out_ch(self) -> int: ...
    @property
    def in_ch(self) -> int: ...
    @property
    def kernel(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def wide(self) -> int: ...


@functools.cache
def _library() -> ctypes.CDLL:
    library = ctypes.CDLL(str(host_library.build("cmx_nn_layout", [SOURCE], [], "lowering (the kernels' layouts)")))
    for name, (result, arguments) in _SIGNATURES.items():
        function = getattr(library, name)
        function.restype, function.argtypes = result, list(arguments)
    return library


def _call(name: str, *arguments: Any) -> Any:
    return getattr(_library(), name)(*arguments)


@functools.cache
def _row_params_type() -> type[ctypes.Structure]:
    """cmx_conv_row_params as ctypes lays it out: its int32 members in the header's order."""
    header = (KERNELS_DIR / "nn" / "cmx_nn_layout.h").read_text()
    body = re.search(r"typedef struct \{(.*?)\} cmx_conv_row_params;", header, re.S)
    if body is None:
        raise LookupError("kernels/nn/cmx_nn_layout.h defines no cmx_conv_row_params")
    names = re.findall(r"int32_t (\w+);", re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S))
    return type("cmx_conv_row_params", (ctypes.Structure,), {"_fields_": [(n, _I32) for n in names]})


def _row_params(geometry: RowGeometry, chunk: int = 2) -> ctypes.Structure:
    params = _row_params_type()()
    members = {member[0] for member in params._fields_}
    for field in dataclasses.fields(geometry):  # the geometry's names are the struct's
        if field.name not in members:
            raise LookupError(f"cmx_conv_row_params has no member {field.name} (kernels/nn/cmx_nn_layout.h)")
        setattr(params, field.name, int(getattr(geometry, field.name)))
    params.chunk = chunk
    params.row_bytes = _call("cmx_conv_row_s8_row_bytes", ctypes.byref(params))
    return params


def row_bytes(geometry: RowGeometry) -> int:
    """cmx_conv_row_s8_row_bytes: weight bytes per output channel."""
    return int(_row_params(geometry).row_bytes)


def row_chunk_bytes(geometry: RowGeometry, chunk: int) -> int:
    """cmx_conv_row_s8_chunk_bytes: a widened chunk of `chunk` output positions."""
    return int(_call("cmx_conv_row_s8_chunk_bytes", ctypes.byref(_row_params(geometry, chunk))))


def row_scratch_bytes(geometry: RowGeometry, chunk: int) -> int:
    """cmx_conv_row_s8_scratch_bytes."""
    return int(_call("cmx_conv_row_s8_scratch_bytes", ctypes.byref(_row_params(geometry, chunk))))


def _out(array: NDArray[Any]) -> int:
    return int(array.ctypes.data)


def row_triples(geometry: RowGeometry) -> bool:
    """cmx_conv_row_s8_triples: the layer's positions may run three at a time."""
    return bool(_call("cmx_conv_row_s8_triples", ctypes.byref(_row_params(geometry))))


def row_weights(filter_rows: NDArray[Any], geometry: RowGeometry) -> bytes:
    """cmx_conv_row_s8_weights: a CMSIS-NN filter [out_ch][rows * kernel * in_ch] as the kernel reads it
    (int16 values when wide is 1)."""
    params = _row_params(geometry)
    source = np.ascontiguousarray(filter_rows, dtype=np.int8)
    out = np.zeros(geometry.out_ch * params.row_bytes, dtype="<i2" if geometry.wide == 1 else np.int8)
    _call("cmx_conv_row_s8_weights", ctypes.byref(params), _out(source), _out(out))
    return out.tobytes()


def row_filter(blob: bytes, geometry: RowGeometry) -> NDArray[Any]:
    """row_weights read back: the filter [out_ch][rows * kernel * in_ch]."""
    count = geometry.out_ch * geometry.rows * geometry.kernel * geometry.in_ch
    dtype = np.dtype("<i2") if geometry.wide == 1 else np.dtype(np.int8)
    sources = _sources(lambda v: np.frombuffer(row_weights(v, geometry), dtype=dtype), count, 127)
    return _unpack(np.frombuffer(blob, dtype=dtype, count=len(sources)), sources, count).reshape(geometry.out_ch, -1)


def row_constants(
    geometry: RowGeometry, output_offset: int, bias: NDArray[Any] | None, mults: NDArray[Any], shifts: NDArray[Any]
) -> bytes:
    """cmx_conv_row_s8_constants: the layer's biases (None: zeros), multipliers and shifts as the kernel
    reads them, a record a channel pair, the output offset in each shift word."""
    params = _row_params(geometry)
    params.output_offset = output_offset
    table = [np.ascontiguousarray(v, dtype=np.int32) for v in (mults, shifts)]
    held = None if bias is None else np.ascontiguousarray(bias, dtype=np.int32)
    out = np.zeros(int(_call("cmx_conv_row_s8_constants_words", geometry.out_ch)), dtype="<i4")
    _call(
        "cmx_conv_row_s8_constants",
        ctypes.byref(params),
        None if held is None else _out(held),
        *map(_out, table),
        _out(out),
    )
    return out.tobytes()


def row_constants_read(blob: bytes, out_ch: int) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """row_constants read back: (biases, multipliers, shifts)."""
    words = int(_call("cmx_conv_row_s8_constants_words", out_ch))
    held = np.ascontiguousarray(np.frombuffer(blob, dtype="<i4", count=words))
    bias, mults, shifts = (np.zeros(out_ch, dtype=np.int32) for _ in range(3))
    _call("cmx_conv_row_s8_constants_read", out_ch, _out(held), _out(bias), _out(mults), _out(shifts))
    return bias, mults, shifts


def fc_weight_bytes(rows: int, cols: int, group: int) -> int:
    return int(_call("cmx_fully_connected_s8_layout_bytes", rows, cols, group))


def fc_weights(filter_rc: NDArray[Any], group: int) -> bytes:
    """cmx_fully_connected_s8_layout: a filter [rows][cols] as cmx_fully_connected_s8 reads it with G = group."""
    rows, cols = filter_rc.shape
    source = np.ascontiguousarray(filter_rc, dtype=np.int8)
    out = np.zeros(fc_weight_bytes(rows, cols, group), dtype=np.int8)
    _call("cmx_fully_connected_s8_layout", rows, cols, group, _out(source), _out(out))
    return out.tobytes()


def fc_filter(blob: bytes, rows: int, cols: int, group: int) -> NDArray[Any]:
    """fc_weights read back: the filter [rows][cols]."""
    pack = functools.partial(_fc_values, rows=rows, cols=cols, group=group)
    sources = _sources(pack, rows * cols, 127)
    return _unpack(np.frombuffer(blob, dtype=np.int8, count=len(sources)), sources, rows * cols).reshape(rows, cols)


def _fc_values(values: NDArray[Any], rows: int, cols: int, group: int) -> NDArray[Any]:
    return np.frombuffer(fc_weights(values.reshape(rows, cols), group), dtype=np.int8)


def fc_s4_weights(values_rc: NDArray[Any]) -> bytes:
    """cmx_fully_connected_s4_weights: 4-bit weights [rows][cols] (values in [-8, 7]) as the kernel reads them."""
    rows, cols = values_rc.shape
    source = np.ascontiguousarray(values_rc, dtype=np.int8)
    out = np.zeros(int(_call("cmx_fully_connected_s4_weight_bytes", rows, cols)), dtype=np.uint8)
    _call("cmx_fully_connected_s4_weights", rows, cols, _out(source), _out(out))
    return out.tobytes()


def _nibbles(blob: bytes) -> NDArray[Any]:
    """Each byte's low nibble, then its high one, less the 8 the layout adds."""
    data = np.frombuffer(blob, dtype=np.uint8)
    nibbles: NDArray[Any] = np.stack([data & 0x0F, data >> 4], axis=1).reshape(-1).astype(np.int16) - 8
    return nibbles


def fc_s4_filter(blob: bytes, rows: int, cols: int) -> NDArray[Any]:
    """fc_s4_weights read back: the values [rows][cols] in [-8, 7]."""
    sources = _sources(lambda v: _nibbles(fc_s4_weights(v.reshape(rows, cols))), rows * cols, 8)
    nibbles = _nibbles(blob[: len(sources) // 2])
    return _unpack(nibbles, sources, rows * cols).reshape(rows, cols)


def helium_constants(sums: NDArray[Any], mults: NDArray[Any], shifts: NDArray[Any]) -> bytes:
    """cmx_conv_helium_s8_constants: the channel constants as cmx_conv_helium_s8 reads them."""
    table = [np.ascontiguousarray(v, dtype=np.int32) for v in (sums, mults, shifts)]
    out = np.zeros(3 * len(table[0]), dtype="<i4")
    _call("cmx_conv_helium_s8_constants", len(table[0]), *map(_out, table), _out(out))
    return out.tobytes()


def helium_constants_read(blob: bytes, rows: int) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """helium_constants read back: (sums, multipliers, shifts)."""
    index = np.arange(3 * rows, dtype=np.int32).reshape(3, rows)
    sources = np.frombuffer(helium_constants(*index), dtype="<i4")
    table = _unpack(np.frombuffer(blob, dtype="<i4", count=3 * rows), sources.astype(np.int64), 3 * rows)
    return table[:rows].copy(), table[rows : 2 * rows].copy(), table[2 * rows :].copy()


def _sources(pack: Callable[[NDArray[Any]], NDArray[Any]], count: int, base: int) -> NDArray[Any]:
    """For each value `pack` writes, the index of the input value it holds, or -1 for padding: every
    input value's index + 1 written in base `base` (each digit a value the layout takes; padding packs
    as 0), packed a digit at a time and summed back."""
    number = np.arange(1, count + 1, dtype=np.int64)
    total: NDArray[Any] | None = None
    place = 1
    while place <= count:
        packed = pack(((number // place) % base).astype(np.int8)).astype(np.int64) * place
        total = packed if total is None else total + packed
        place *= base
    assert total is not None
    return total - 1


def _unpack(packed: NDArray[Any], sources: NDArray[Any], count: int) -> NDArray[Any]:
    values = np.zeros(count, dtype=packed.dtype)
    held = sources >= 0
    values[sources[held]] = packed[held]
    return values


def dw_band_scratch_bytes(channels: int, out_h: int, out_w: int, stride: tuple[int, int]) -> int:
    """cmx_dw3x3_band_scratch_bytes: cmx_depthwise_3x3_s8's banded paths' scratch on a DSP core."""
    return int(_call("cmx_dw3x3_band_scratch_bytes", channels, out_h, out_w, *stride))


def dw_band_rows(stride: tuple[int, int], out_w: int) -> int:
    """cmx_dw3x3_band_rows: the output rows of a band of the banded path that takes this shape."""
    return int(_call("cmx_dw3x3_band_rows", *stride, out_w))


def dw_planar(stride: tuple[int, int], out_w: int) -> bool:
    """cmx_dw3x3_planar_path: cmx_depthwise_3x3_s8's planar path takes this shape (else the grouped one)."""
    return bool(_call("cmx_dw3x3_planar_path", *stride, out_w))


def helium_field_bytes(in_ch: int, kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int]) -> int:
    """cmx_conv_helium_s8_field_bytes: cmx_conv_helium_s8's scratch."""
    return int(_call("cmx_conv_helium_s8_field_bytes", *kernel, in_ch, *stride, *padding))


def lstm_scratch_bytes(batch: int, steps: int, input_size: int, hidden: int, reverse: bool, element: int) -> int:
    """cmx_lstm_scratch_bytes: what the backend gives an LSTM layer."""
    return int(_call("cmx_lstm_scratch_bytes", batch, steps, input_size, hidden, int(reverse), element))


def gru_scratch_bytes(hidden: int) -> int:
    """cmx_gru_scratch_bytes: cmx_gru_s8's."""
    return int(_call("cmx_gru_scratch_bytes", hidden))


def bmm_scratch_bytes(batches: int, inner: int, cols: int, transposed: bool, element: int) -> int:
    """cmx_bmm_scratch_bytes: what the backend gives a batch matmul (b transposed, the s8 column sums)."""
    return int(_call("cmx_bmm_scratch_bytes", batches, inner, cols, int(transposed), element))
