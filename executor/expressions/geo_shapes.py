"""Doris's geometry values (be/src/geo/geo_types.cpp, S2 geometry): parsing, validation, the
S2 round trip of coordinates, WKT / WKB text, areas and containment, in numpy.

A geometry value is carried as its WKT text with the coordinates as they were given (Python's
shortest repr), already validated and normalised the way Doris builds its S2 shapes:

    POINT (x y)                    |x| <= 180 and |y| <= 90, else no shape (NULL)
    LINESTRING (x y, ...)          adjacent repeated points dropped; at least 2 left
    POLYGON ((x y, ...), ...)      every ring closed, repeats dropped, 3+ vertices; a ring whose
                                   signed spherical area is negative (clockwise) is reversed,
                                   as S2Loop::Normalize inverts it; holes must lie inside ring 0
    CIRCLE ((x y), radius_m)       S2Cap around the point, radius as metres on S2's earth

Doris keeps S2Points (unit vectors), so what it shows went through lat/lng -> xyz -> lat/lng:
`as_text` redoes that round trip and prints each coordinate with C++'s setprecision(12)
(`%.12g`, Doris 2.1's print_s2point); ST_X / ST_Y round the round trip to 13 decimals as
GeoPoint::x() does (`%.13f`). Edges are geodesics: areas sum l'Huilier triangle areas of a fan
from the first vertex (S2::GetSurfaceIntegral without its re-origining for edges near pi long,
and without S2::Area's Girard branch for needle triangles); containment projects onto the
gnomonic plane at the ring's centre, where geodesics are straight lines (exact for shapes
within a hemisphere; points on an edge follow the even-odd rule, not S2's semi-open model).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

import numpy as np

EARTH_RADIUS_M = 6371010.0  # S2Earth::RadiusMeters()
EARTH_RADIUS_KM = 6371.01
RAD = np.pi / 180  # S1Angle::Degrees: (M_PI / 180) * degrees
DEG = 180 / np.pi


@dataclass(frozen=True)
class Shape:
    kind: str                     # POINT | LINESTRING | POLYGON | CIRCLE
    rings: tuple[np.ndarray, ...]  # (n, 2) lng/lat arrays: the point, the line, the rings
    radius: float = 0.0           # CIRCLE: metres


# -- the S2 round trip ---------------------------------------------------------------------------
def to_xyz(lng: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """S2LatLng::FromDegrees(lat, lng).ToPoint(): unit vectors, shape (..., 3)."""
    phi, theta = RAD * np.asarray(lat, float), RAD * np.asarray(lng, float)
    cosphi = np.cos(phi)
    return np.stack([np.cos(theta) * cosphi, np.sin(theta) * cosphi, np.sin(phi)], axis=-1)


def to_lnglat(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S2LatLng(point) in degrees: (lng, lat)."""
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    return DEG * np.arctan2(y, x), DEG * np.arctan2(z, np.sqrt(x * x + y * y))


def round_trip(lng: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return to_lnglat(to_xyz(lng, lat))


def valid_lnglat(lng: np.ndarray, lat: np.ndarray) -> np.ndarray:
    return (np.abs(lng) <= 180) & (np.abs(lat) <= 90)


# -- WKT in --------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:([A-Za-z]+)|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|([(),]))")


def _tokens(text: str) -> list[str] | None:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return None
        out.append(m.group(0).strip())
        pos = m.end()
    return out


def parse_wkt(text: str) -> Shape | None:
    """The shape of Doris's WKT grammar (POINT, LINESTRING, POLYGON), or None where Doris's
    parser or S2's checks refuse it."""
    toks = _tokens(text)
    if not toks:
        return None
    kind, rest = toks[0].upper(), toks[1:]
    try:
        if kind == "POINT":
            coords, end = _coords(rest, 0, single=True)
            return point_shape(coords[0][0], coords[0][1]) if end == len(rest) else None
        if kind == "LINESTRING":
            coords, end = _coords(rest, 0)
            return line_shape(np.array(coords, float)) if end == len(rest) else None
        if kind == "POLYGON":
            if rest[0] != "(":
                return None
            rings, pos = [], 1
            while True:
                coords, pos = _coords(rest, pos)
                rings.append(np.array(coords, float))
                if rest[pos] == ")":
                    break
                if rest[pos] != ",":
                    return None
                pos += 1
            return polygon_shape(rings) if pos + 1 == len(rest) else None
    except (IndexError, ValueError):
        return None
    return None


def _coords(toks: list[str], pos: int, single: bool = False) -> tuple[list, int]:
    """`( x y [, x y ...] )` from toks[pos]: (coordinates, position after the ')')."""
    if toks[pos] != "(":
        raise ValueError
    out, pos = [], pos + 1
    while True:
        out.append((float(toks[pos]), float(toks[pos + 1])))
        pos += 2
        if toks[pos] == ")":
            return out, pos + 1
        if toks[pos] != "," or single:
            raise ValueError
        pos += 1


# -- building (Doris's to_s2point / to_s2polyline / to_s2loop checks) ----------------------------
def point_shape(lng: float, lat: float) -> Shape | None:
    if not valid_lnglat(lng, lat):
        return None
    return Shape("POINT", (np.array([[lng, lat]], float),))


def _dedupe(coords: np.ndarray) -> np.ndarray:
    """Adjacent repeated points removed (remove_duplicate_points), compared as S2Points."""
    xyz = to_xyz(coords[:, 0], coords[:, 1])
    keep = np.ones(len(coords), bool)
    keep[1:] = np.any(xyz[1:] != xyz[:-1], axis=1)
    return coords[keep]


def line_shape(coords: np.ndarray) -> Shape | None:
    if coords.ndim != 2 or not valid_lnglat(coords[:, 0], coords[:, 1]).all():
        return None
    coords = _dedupe(coords)
    if len(coords) < 2:
        return None
    xyz = to_xyz(coords[:, 0], coords[:, 1])
    if np.any(np.all(np.isclose(xyz[1:], -xyz[:-1], rtol=0, atol=1e-15), axis=1)):
        return None  # S2Polyline::IsValid: adjacent vertices may not be antipodal
    return Shape("LINESTRING", (coords,))


def polygon_shape(rings: list[np.ndarray]) -> Shape | None:
    out = []
    for ring in rings:
        if ring.ndim != 2 or not valid_lnglat(ring[:, 0], ring[:, 1]).all():
            return None
        xyz = to_xyz(ring[:, 0], ring[:, 1])
        if len(ring) == 0 or np.any(xyz[0] != xyz[-1]):
            return None  # GEO_PARSE_LOOP_NOT_CLOSED
        ring = _dedupe(ring)[:-1]
        if len(ring) < 3:
            return None  # GEO_PARSE_LOOP_LACK_VERTICES
        signed = signed_area(to_xyz(ring[:, 0], ring[:, 1]))
        if signed == 0:
            return None  # degenerate: S2Loop::IsValid refuses it
        out.append(ring if signed > 0 else ring[::-1])
    for hole in out[1:]:  # GEO_PARSE_POLYGON_NOT_HOLE
        if not ring_contains(out[0], hole[:, 0], hole[:, 1]).all():
            return None
    return Shape("POLYGON", tuple(out))


def circle_shape(lng: float, lat: float, radius: float) -> Shape | None:
    if not valid_lnglat(lng, lat) or radius != radius:
        return None
    return Shape("CIRCLE", (np.array([[lng, lat]], float),), float(radius))


# -- WKT out -------------------------------------------------------------------------------------
def _num(v: float) -> str:
    """A coordinate as stored: Python's shortest repr, '1' for 1.0."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def _g12(v: float) -> str:
    return f"{v:.12g}"


def _points(coords: np.ndarray, shown: bool) -> str:
    if shown:
        lng, lat = round_trip(coords[:, 0], coords[:, 1])
        return ", ".join(f"{_g12(a)} {_g12(b)}" for a, b in zip(lng, lat))
    return ", ".join(f"{_num(a)} {_num(b)}" for a, b in coords)


def to_wkt(shape: Shape, shown: bool = False) -> str:
    """The stored text (`shown` False) or what ST_AsText prints (`shown` True)."""
    if shape.kind == "POINT":
        return f"POINT ({_points(shape.rings[0], shown)})"
    if shape.kind == "LINESTRING":
        return f"LINESTRING ({_points(shape.rings[0], shown)})"
    if shape.kind == "POLYGON":
        return "POLYGON (" + ", ".join(f"({_points(np.vstack([r, r[:1]]), shown)})"
                                       for r in shape.rings) + ")"
    radius = _g12(chord_to_meters(chord2(shape.radius))) if shown else _num(shape.radius)
    return f"CIRCLE (({_points(shape.rings[0], shown)}), {radius})"


def parse_stored(text: str) -> Shape | None:
    """A stored geometry (the WKT above, CIRCLE included)."""
    m = _CIRCLE.match(text)
    if m:
        try:
            return circle_shape(float(m.group(1)), float(m.group(2)), float(m.group(3)))
        except ValueError:
            return None
    return parse_wkt(text)


_CIRCLE = re.compile(r"^\s*CIRCLE\s*\(\(\s*(\S+)\s+(\S+)\s*\)\s*,\s*(\S+)\s*\)\s*$", re.I)


# -- WKB (geo_tobinary.cpp / wkb_parse.cpp) ------------------------------------------------------
def to_wkb_hex(shape: Shape) -> str | None:
    """ST_AsBinary's text: `\\x` and the little-endian WKB in lower-case hex; coordinates are the
    S2 round trip rounded to 13 decimals (to_coords). Circles have no WKB (NULL)."""
    codes = {"POINT": 1, "LINESTRING": 2, "POLYGON": 3}
    if shape.kind not in codes:
        return None
    out = struct.pack("<BI", 1, codes[shape.kind])

    def coords(c: np.ndarray, sized: bool) -> bytes:
        lng, lat = (np.round(v, 13) for v in round_trip(c[:, 0], c[:, 1]))
        head = struct.pack("<I", len(c)) if sized else b""
        return head + np.column_stack([lng, lat]).astype("<f8").tobytes()
    if shape.kind == "POLYGON":
        out += struct.pack("<I", len(shape.rings))
        out += b"".join(coords(np.vstack([r, r[:1]]), True) for r in shape.rings)
    else:
        out += coords(shape.rings[0], shape.kind == "LINESTRING")
    return "\\x" + out.hex()


def parse_wkb(data: bytes) -> Shape | None:
    """WKB (or EWKB with an SRID) given as bytes or as hex text with an optional `\\x` / `x`."""
    text = data.decode("latin-1")
    for prefix in ("\\x", "x"):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    if re.fullmatch(r"(?:[0-9A-Fa-f]{2})+", text):
        data = bytes.fromhex(text)
    try:
        order = "<" if data[0] == 1 else ">"
        code, = struct.unpack_from(order + "I", data, 1)
        pos = 5
        if code & 0x20000000:  # EWKB: an SRID follows the type
            pos += 4
        code &= 0xFFFF

        def read(n: int) -> np.ndarray:
            nonlocal pos
            values = np.frombuffer(data, order + "f8", 2 * n, pos).reshape(n, 2)
            pos += 16 * n
            return values.astype(float)

        def count() -> int:
            nonlocal pos
            n, = struct.unpack_from(order + "I", data, pos)
            pos += 4
            return n
        if code == 1:
            c = read(1)
            return point_shape(c[0, 0], c[0, 1])
        if code == 2:
            return line_shape(read(count()))
        if code == 3:
            return polygon_shape([read(count()) for _ in range(count())])
    except (IndexError, ValueError, struct.error):
        return None
    return None


# -- measures ------------------------------------------------------------------------------------
def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vector3::Angle: atan2(|a x b|, a . b), row-wise."""
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))


def signed_area(xyz: np.ndarray) -> float:
    """The loop's signed area in steradians (positive when counter-clockwise): a fan of
    l'Huilier triangles from the first vertex, each signed by its orientation."""
    a = np.broadcast_to(xyz[0], xyz[1:-1].shape)
    b, c = xyz[1:-1], xyz[2:]
    sa, sb, sc = _angle(b, c), _angle(c, a), _angle(a, b)
    s = 0.5 * (sa + sb + sc)
    area = 4 * np.arctan(np.sqrt(np.maximum(
        0.0, np.tan(0.5 * s) * np.tan(0.5 * (s - sa)) * np.tan(0.5 * (s - sb))
        * np.tan(0.5 * (s - sc)))))
    sign = np.sign(np.sum(np.cross(a, b) * c, axis=-1))
    return float(np.sum(sign * area))


def chord2(radius_m: float) -> float:
    """S1ChordAngle(S2Earth::ToAngle(metres)).length2()."""
    angle = radius_m / EARTH_RADIUS_M
    if angle < 0:
        return -1.0
    length = 2 * np.sin(0.5 * min(np.pi, angle))
    return float(length * length)


def chord_to_meters(length2: float) -> float:
    angle = -1.0 if length2 < 0 else 2 * np.arcsin(0.5 * np.sqrt(length2))
    return float(angle * EARTH_RADIUS_M)


def area_steradians(shape: Shape) -> float:
    if shape.kind == "CIRCLE":
        return 2 * np.pi * max(0.0, 0.5 * chord2(shape.radius))
    if shape.kind == "POLYGON":
        areas = [abs(signed_area(to_xyz(r[:, 0], r[:, 1]))) for r in shape.rings]
        return areas[0] - sum(areas[1:])
    return 0.0


# -- containment ---------------------------------------------------------------------------------
def _gnomonic(center: np.ndarray, xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(plane coordinates, in front of the plane) of unit vectors around `center`."""
    helper = np.array([1.0, 0, 0]) if abs(center[0]) < 0.9 else np.array([0, 1.0, 0])
    u = np.cross(center, helper)
    u /= np.linalg.norm(u)
    v = np.cross(center, u)
    depth = xyz @ center
    front = depth > 1e-12
    safe = np.where(front, depth, 1.0)
    return np.stack([(xyz @ u) / safe, (xyz @ v) / safe], axis=-1), front


def ring_contains(ring: np.ndarray, lng: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Which points (lng, lat arrays) lie inside the ring (even-odd crossings in the plane)."""
    xyz = to_xyz(ring[:, 0], ring[:, 1])
    center = xyz.sum(axis=0)
    norm = np.linalg.norm(center)
    if norm == 0:
        return np.zeros(len(lng), bool)
    center /= norm
    (poly, _), (pts, front) = _gnomonic(center, xyz), _gnomonic(center, to_xyz(lng, lat))
    x1, y1 = poly[:, 0], poly[:, 1]
    x2, y2 = np.roll(x1, -1), np.roll(y1, -1)
    px, py = pts[:, :1], pts[:, 1:]
    straddles = (y1 > py) != (y2 > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross_x = x1 + (py - y1) * (x2 - x1) / (y2 - y1)
    inside = (np.sum(straddles & (px < cross_x), axis=1) % 2) == 1
    return inside & front


def contains_points(shape: Shape, lng: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """ST_Contains(shape, POINT) for many points."""
    if shape.kind == "CIRCLE":
        center = to_xyz(shape.rings[0][:, 0], shape.rings[0][:, 1])[0]
        d2 = np.minimum(4.0, np.sum((to_xyz(lng, lat) - center) ** 2, axis=-1))
        return d2 <= chord2(shape.radius)
    if shape.kind != "POLYGON":
        return np.zeros(len(lng), bool)
    inside = ring_contains(shape.rings[0], lng, lat)
    for hole in shape.rings[1:]:
        inside &= ~ring_contains(hole, lng, lat)
    return inside


def contains_shape(outer: Shape, inner: Shape) -> bool:
    """ST_Contains of a polygon and a line or polygon: every vertex inside and no edge of the
    inner shape crossing a ring of the outer one."""
    if outer.kind != "POLYGON" or inner.kind not in ("LINESTRING", "POLYGON"):
        return False
    for ring in inner.rings:
        if not contains_points(outer, ring[:, 0], ring[:, 1]).all():
            return False
        closed = np.vstack([ring, ring[:1]]) if inner.kind == "POLYGON" else ring
        if any(_edges_cross(o, closed) for o in outer.rings):
            return False
    return True


def _edges_cross(ring: np.ndarray, path: np.ndarray) -> bool:
    xyz = to_xyz(ring[:, 0], ring[:, 1])
    center = xyz.sum(axis=0) / np.linalg.norm(xyz.sum(axis=0))
    a, _ = _gnomonic(center, xyz)
    b, _ = _gnomonic(center, to_xyz(path[:, 0], path[:, 1]))
    p1, p2 = a[:, None, :], np.roll(a, -1, axis=0)[:, None, :]
    q1, q2 = b[None, :-1, :], b[None, 1:, :]

    def orient(o, s, t):
        return np.sign((s[..., 0] - o[..., 0]) * (t[..., 1] - o[..., 1])
                       - (s[..., 1] - o[..., 1]) * (t[..., 0] - o[..., 0]))
    proper = (orient(p1, p2, q1) * orient(p1, p2, q2) < 0) & \
        (orient(q1, q2, p1) * orient(q1, q2, p2) < 0)
    return bool(proper.any())
