"""Doris's ST_* functions (functions_geo.cpp) over the geometry values of `geo_shapes.py`.

    ST_Point(x, y)                           POINT; x outside [-180, 180] or y outside [-90, 90]
                                             gives NULL
    ST_X(p), ST_Y(p)                         DOUBLE, the S2 round trip to 13 decimals
    ST_AsText(g) / ST_AsWKT(g)               WKT as Doris prints it (12 significant digits)
    ST_GeometryFromText / ST_GeomFromText    any shape; text that is not one gives NULL
    ST_LineFromText / ST_LineStringFromText  only a LINESTRING
    ST_Polygon / ST_PolyFromText / ST_PolygonFromText   only a POLYGON
    ST_Circle(lng, lat, radius_m)            CIRCLE
    ST_Contains(shape, g)                    BOOLEAN: a polygon or circle holding a point, a
                                             polygon holding a line or polygon; else false
    ST_Distance_Sphere(x1, y1, x2, y2)       metres on S2's earth (haversine, radius 6371010)
    ST_Angle_Sphere(x1, y1, x2, y2)          the same arc in degrees
    ST_Angle(p1, p2, p3), ST_Azimuth(p1, p2) radians in [0, 2pi), Doris's GeoPoint::ComputeAngle
                                             (which reads each point as lat = x, lng = y)
    ST_Area_Square_Meters(g) / ST_Area_Square_Km(g)   0 for points and lines
    ST_AsBinary(g)                           `\\x` + WKB hex (Doris's text form)
    ST_GeometryFromWKB / ST_GeomFromWKB      from that text, hex or raw WKB / EWKB

Numbers run in numpy over whole columns (construction of points and circles is Arrow string
concatenation; ST_X / ST_Y read the stored text with one regular expression); shapes given as
text are parsed once per distinct value, and ST_Contains tests all points of one shape at once.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import geo_shapes as geo
from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import (all_scalar, map_distinct, map_distinct_rows, to_array,
                                          to_numpy, valid_mask)

STRING = pa.string()
F64 = pa.float64()
_POINT = r"^POINT \((?P<x>\S+) (?P<y>\S+)\)$"


def _args(node: exp.Expression, frame: Frame, count: int) -> list[Value]:
    args = call_args(node)
    if len(args) != count:
        name = node.sql_name() if not isinstance(node, exp.Anonymous) else str(node.this)
        raise ExpressionError(f"{name.lower()} takes {count} argument(s)")
    return [frame.eval(a) for a in args]


def _columns(values: list[Value], n: int, t: pa.DataType) -> tuple[list, np.ndarray, int]:
    """(numpy columns, rows where all are non-null, row count) of values cast to `t`."""
    rows = 1 if all_scalar(*values) else n
    arrays = [to_array(cast_value(v, t), rows) for v in values]
    ok = np.ones(rows, bool)
    for a in arrays:
        ok &= valid_mask(a)
    fill = 0.0 if t == F64 else ""
    return [to_numpy(a, fill) for a in arrays], ok, rows


def _out(values: np.ndarray | pa.Array, ok: np.ndarray, t: pa.DataType, scalar: bool) -> Value:
    arr = pa.array(values, t, mask=~ok) if isinstance(values, np.ndarray) else \
        pc.if_else(pa.array(ok), values, pa.scalar(None, t))
    return arr[0] if scalar else arr


def _scalar(values: list[Value]) -> bool:
    return all_scalar(*values)


# -- constructors --------------------------------------------------------------------------------
def eval_st_point(node: exp.Expression, frame: Frame) -> Value:
    values = _args(node, frame, 2)
    (x, y), ok, rows = _columns(values, frame.n, F64)
    ok &= geo.valid_lnglat(x, y)
    text = pc.binary_join_element_wise(
        "POINT (", pa.array(x).cast(STRING), " ", pa.array(y).cast(STRING), ")", "")
    return _out(text, ok, STRING, _scalar(values))


def eval_st_circle(node: exp.Expression, frame: Frame) -> Value:
    values = _args(node, frame, 3)
    (x, y, r), ok, rows = _columns(values, frame.n, F64)
    ok &= geo.valid_lnglat(x, y) & ~np.isnan(r)
    text = pc.binary_join_element_wise(
        "CIRCLE ((", pa.array(x).cast(STRING), " ", pa.array(y).cast(STRING), "), ",
        pa.array(r).cast(STRING), ")", "")
    return _out(text, ok, STRING, _scalar(values))


def _from_text(kind: str | None) -> Callable[[exp.Expression, Frame], Value]:
    def parse(text: str) -> str | None:
        shape = geo.parse_wkt(text)
        return None if shape is None or kind not in (None, shape.kind) else geo.to_wkt(shape)

    def handler(node: exp.Expression, frame: Frame) -> Value:
        return map_distinct(cast_value(_args(node, frame, 1)[0], STRING), parse, STRING)
    return handler


def _wkb_text(value: bytes | str) -> str | None:
    raw = value if isinstance(value, bytes) else value.encode("latin-1", "replace")
    shape = geo.parse_wkb(raw)
    return None if shape is None else geo.to_wkt(shape)


def eval_from_wkb(node: exp.Expression, frame: Frame) -> Value:
    v = _args(node, frame, 1)[0]
    if not (pa.types.is_binary(v.type) or pa.types.is_large_binary(v.type)):
        v = cast_value(v, STRING)
    return map_distinct(v, _wkb_text, STRING)


# -- reading shapes ------------------------------------------------------------------------------
def _shape_fn(fn: Callable[[geo.Shape], object], out: pa.DataType):
    def apply(text: str) -> object:
        shape = geo.parse_stored(text)
        return None if shape is None else fn(shape)

    def handler(node: exp.Expression, frame: Frame) -> Value:
        return map_distinct(cast_value(_args(node, frame, 1)[0], STRING), apply, out)
    return handler


def point_coords(v: Value, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, is a point) of stored POINTs after Doris's round trip, rounded as x() / y()."""
    texts = to_array(cast_value(v, STRING), n)
    parts = pc.extract_regex(texts, _POINT)
    ok = valid_mask(parts)
    xy = [to_numpy(cast_value(pc.struct_field(parts, [i]), F64), 0.0) for i in (0, 1)]
    ok &= ~np.isnan(xy[0]) & ~np.isnan(xy[1]) if len(texts) else ok
    lng, lat = geo.round_trip(xy[0], xy[1])
    return np.round(lng, 13), np.round(lat, 13), ok


def _coordinate(index: int):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        values = _args(node, frame, 1)
        scalar = _scalar(values)
        x, y, ok = point_coords(values[0], 1 if scalar else frame.n)
        return _out((x, y)[index], ok, F64, scalar)
    return handler


def _area(unit_radius: float):
    return _shape_fn(lambda s: geo.area_steradians(s) * unit_radius ** 2, F64)


# -- spherical measures --------------------------------------------------------------------------
def _distance(lng1, lat1, lng2, lat2) -> np.ndarray:
    """S2LatLng::GetDistance in radians (arguments in radians)."""
    dlat = np.sin(0.5 * (lat2 - lat1))
    dlng = np.sin(0.5 * (lng2 - lng1))
    x = dlat * dlat + dlng * dlng * np.cos(lat1) * np.cos(lat2)
    return 2 * np.arcsin(np.sqrt(np.minimum(1.0, x)))


def _sphere(scale: Callable[[np.ndarray], np.ndarray]):
    def handler(node: exp.Expression, frame: Frame) -> Value:
        values = _args(node, frame, 4)
        (x1, y1, x2, y2), ok, _ = _columns(values, frame.n, F64)
        r = [geo.RAD * v for v in (x1, y1, x2, y2)]
        for lng, lat in ((r[0], r[1]), (r[2], r[3])):
            ok &= (np.abs(lat) <= np.pi / 2) & (np.abs(lng) <= np.pi)
        return _out(scale(_distance(*r)), ok, F64, _scalar(values))
    return handler


def _bearing(lat1, lng1, lat2, lng2) -> np.ndarray:
    """S2Earth::GetInitialBearing (radians in, radians out)."""
    half = np.sin(0.5 * (lng2 - lng1))
    x = np.sin(lat2 - lat1) + np.sin(lat1) * np.cos(lat2) * 2 * half * half
    return np.arctan2(np.sin(lng2 - lng1) * np.cos(lat2), x)


def _angle(p1: tuple, p2: tuple, p3: tuple) -> tuple[np.ndarray, np.ndarray]:
    """GeoPoint::ComputeAngle over (x, y) columns: (angle, defined)."""
    lat = [geo.RAD * p[0] for p in (p1, p2, p3)]  # Doris reads x as latitude
    lng = [geo.RAD * p[1] for p in (p1, p2, p3)]
    same = ((lat[1] == lat[0]) & (lng[1] == lng[0])) | ((lat[1] == lat[2]) & (lng[1] == lng[2]))
    d12 = _distance(*(geo.RAD * v for v in (p1[0], p1[1], p2[0], p2[1]))) * geo.DEG
    d32 = _distance(*(geo.RAD * v for v in (p3[0], p3[1], p2[0], p2[1]))) * geo.DEG
    a = _bearing(lat[1], lng[1], lat[2], lng[2])
    b = _bearing(lat[1], lng[1], lat[0], lng[0])
    angle = np.where(b - a < 0, b - a + 2 * np.pi, b - a)
    return angle, ~same & (d12 != 180) & (d32 != 180)


def eval_st_angle(node: exp.Expression, frame: Frame) -> Value:
    values = _args(node, frame, 3)
    scalar, n = _scalar(values), (1 if _scalar(values) else frame.n)
    points = [point_coords(v, n) for v in values]
    angle, ok = _angle(*[(x, y) for x, y, _ in points])
    return _out(angle, ok & points[0][2] & points[1][2] & points[2][2], F64, scalar)


def eval_st_azimuth(node: exp.Expression, frame: Frame) -> Value:
    values = _args(node, frame, 2)
    scalar, n = _scalar(values), (1 if _scalar(values) else frame.n)
    (x1, y1, ok1), (x2, y2, ok2) = (point_coords(v, n) for v in values)
    north_x, north_y = (np.round(v, 13) for v in geo.round_trip(np.zeros(n), np.full(n, 90.0)))
    angle, ok = _angle((north_x, north_y), (x1, y1), (x2, y2))
    return _out(angle, ok & ok1 & ok2, F64, scalar)


# -- containment ---------------------------------------------------------------------------------
def eval_st_contains(node: exp.Expression, frame: Frame) -> Value:
    values = _args(node, frame, 2)
    scalar, n = _scalar(values), (1 if _scalar(values) else frame.n)
    shapes = to_array(cast_value(values[0], STRING), n)
    others = to_array(cast_value(values[1], STRING), n)
    px, py, is_point = point_coords(others, n)
    out = np.zeros(n, bool)
    ok = valid_mask(shapes) & valid_mask(others)
    encoded = pc.dictionary_encode(shapes)
    codes = to_numpy(encoded.indices, -1)
    for k, text in enumerate(encoded.dictionary.to_pylist()):
        shape = geo.parse_stored(text)
        rows = codes == k
        if shape is None:
            ok &= ~rows
            continue
        points = rows & is_point
        out[points] = geo.contains_points(shape, px[points], py[points])
        rest = rows & ~is_point & ok
        if rest.any():
            pairs = map_distinct_rows([shapes.filter(pa.array(rest)), others.filter(pa.array(rest))],
                                      _contains_pair, pa.int8())
            flags = to_numpy(pairs, -1)
            out[rest] = flags == 1
            ok[np.flatnonzero(rest)[flags == -1]] = False
    return _out(out, ok, pa.bool_(), scalar)


def _contains_pair(outer: str, inner: str) -> int | None:
    a, b = geo.parse_stored(outer), geo.parse_stored(inner)
    if a is None or b is None:
        return None
    return int(geo.contains_shape(a, b))


_FROM_TEXT = _from_text(None)
_LINE = _from_text("LINESTRING")
_POLYGON = _from_text("POLYGON")
_AS_TEXT = _shape_fn(lambda s: geo.to_wkt(s, shown=True), STRING)
HANDLERS = {exp.StPoint: eval_st_point}
FUNCTIONS = {
    "ST_POINT": eval_st_point, "ST_CIRCLE": eval_st_circle,
    "ST_X": _coordinate(0), "ST_Y": _coordinate(1),
    "ST_ASTEXT": _AS_TEXT, "ST_ASWKT": _AS_TEXT,
    "ST_GEOMETRYFROMTEXT": _FROM_TEXT, "ST_GEOMFROMTEXT": _FROM_TEXT,
    "ST_LINEFROMTEXT": _LINE, "ST_LINESTRINGFROMTEXT": _LINE,
    "ST_POLYGON": _POLYGON, "ST_POLYFROMTEXT": _POLYGON, "ST_POLYGONFROMTEXT": _POLYGON,
    "ST_CONTAINS": eval_st_contains,
    "ST_DISTANCE_SPHERE": _sphere(lambda a: a * geo.EARTH_RADIUS_M),
    "ST_ANGLE_SPHERE": _sphere(lambda a: a * geo.DEG),
    "ST_ANGLE": eval_st_angle, "ST_AZIMUTH": eval_st_azimuth,
    "ST_AREA_SQUARE_METERS": _area(geo.EARTH_RADIUS_M),
    "ST_AREA_SQUARE_KM": _area(geo.EARTH_RADIUS_KM),
    "ST_ASBINARY": _shape_fn(geo.to_wkb_hex, STRING),
    "ST_GEOMETRYFROMWKB": eval_from_wkb, "ST_GEOMFROMWKB": eval_from_wkb,
}
