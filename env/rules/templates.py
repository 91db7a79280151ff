"""Templates and model bases for war machine shots (CORE.WM.TEMPLATES), with shapely.

Everything is in inches and degrees (CORE.CONV.UNITS); a direction is in
degrees counter-clockwise from +x, like a facing.

* The small round template is a 3" circle; its centre is the hole.
* The teardrop is the convex hull of a circle of r = 0.5" centred 0.5" from
  the tip and a circle of r = 1.5" centred 6.5" from the tip: 8" long, its
  narrow end at the tip.
* A model is *wholly under* a template if its base lies inside it, and
  *partly under* if its base overlaps it (a touch of less than EPS does not
  count).

Model bases come from the unit's formation (CORE.GEO.FORMATION): one base
rectangle per occupied slot, rank 1 first, file 1 first
(:func:`env.rules.geometry.model_centres`). A skirmisher's base is its slot
less the 1" gap of the loose grid (CORE.TYPE.SKIRMISHERS); a war machine is
one base, its footprint (CORE.GEO.BASES).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.state import UnitState

SMALL_RADIUS = 1.5  # CORE.WM.TEMPLATES: a 3" circle
TEARDROP_LENGTH = 8.0
TEARDROP_NARROW = (0.5, 0.5)  # (centre distance from the tip, radius)
TEARDROP_WIDE = (6.5, 1.5)
SKIRMISH_GAP = 1.0  # CORE.TYPE.SKIRMISHERS: pitch = base + 1"
_QUAD = 16  # quarter-circle segments of the polygonal circles


def unit_vector(direction: float) -> tuple[float, float]:
    """The unit vector of a direction in degrees."""
    r = math.radians(direction)
    return math.cos(r), math.sin(r)


def along(origin: tuple[float, float], direction: float, dist: float) -> tuple[float, float]:
    """The point ``dist`` inches from ``origin`` in ``direction`` (degrees)."""
    dx, dy = unit_vector(direction)
    return origin[0] + dx * dist, origin[1] + dy * dist


def small_template(centre: tuple[float, float]) -> Polygon:
    """The small round template (a 3" circle) centred on ``centre`` (CORE.WM.TEMPLATES)."""
    return Point(centre).buffer(SMALL_RADIUS, quad_segs=_QUAD)


def teardrop(tip: tuple[float, float], direction: float) -> Polygon:
    """The teardrop template with its narrow end at ``tip``, pointing along ``direction`` (CORE.WM.TEMPLATES)."""
    narrow = Point(along(tip, direction, TEARDROP_NARROW[0])).buffer(TEARDROP_NARROW[1], quad_segs=_QUAD)
    wide = Point(along(tip, direction, TEARDROP_WIDE[0])).buffer(TEARDROP_WIDE[1], quad_segs=_QUAD)
    return shapely.convex_hull(shapely.union(narrow, wide))


@dataclass(frozen=True, slots=True)
class Base:
    """One model's base: its unit, its slot index (rank 1 first, file 1 first) and its rectangle."""

    unit: int
    slot: int
    poly: Polygon


def model_bases(u: UnitState) -> list[Base]:
    """The base of every model of ``u`` on the table (see the module docstring)."""
    if not u.alive:
        return []
    if u.troop_type == "war_machine":
        return [Base(u.uid, 0, space.footprint(u))]
    w, d = u.base_w, u.base_d
    if u.has("skirmishers"):
        w, d = max(0.1, w - SKIRMISH_GAP), max(0.1, d - SKIRMISH_GAP)
    pose = space.pose(u)
    centres = geo.model_centres(pose, u.files, u.models, u.base_w, u.base_d)
    out = []
    for i, (x, y) in enumerate(np.asarray(centres)):
        out.append(Base(u.uid, i, geo.footprint(geo.Pose(float(x), float(y), u.facing), w, d)))
    return out


def bases_near(units: list[UnitState], area: shapely.Geometry, reach: float = 0.0) -> list[Base]:
    """The bases of ``units`` whose unit footprint lies within ``reach`` inches of ``area``."""
    out: list[Base] = []
    for u in units:
        if u.alive and geo.distance(space.footprint(u), area) <= reach + geo.EPS:
            out.extend(model_bases(u))
    return out


def wholly_under(template: Polygon, base: Base) -> bool:
    """CORE.WM.TEMPLATES: the base lies inside the template (to EPS)."""
    return template.buffer(geo.EPS, quad_segs=_QUAD).covers(base.poly)


def partly_under(template: Polygon, base: Base) -> bool:
    """CORE.WM.TEMPLATES: the base overlaps the template by more than a touch."""
    return template.intersects(base.poly) and template.intersects(base.poly.buffer(-geo.EPS / 2, join_style="mitre"))


def under(template: Polygon, bases: list[Base]) -> tuple[list[Base], list[Base]]:
    """(wholly under, partly but not wholly under) among ``bases``."""
    wholly, partly = [], []
    for b in bases:
        if wholly_under(template, b):
            wholly.append(b)
        elif partly_under(template, b):
            partly.append(b)
    return wholly, partly


def base_at(point: tuple[float, float], bases: list[Base]) -> Base | None:
    """The base containing ``point`` (its boundary included), the first in order; None if none."""
    pt = Point(point)
    for b in bases:
        if b.poly.buffer(geo.EPS / 2, join_style="mitre").covers(pt):
            return b
    return None


def on_segment(start: tuple[float, float], end: tuple[float, float], bases: list[Base]) -> list[Base]:
    """The bases the zero-width segment from ``start`` to ``end`` touches (CORE.WM.CANNON.SHOT)."""
    if math.dist(start, end) < 1e-9:
        b = base_at(start, bases)
        return [] if b is None else [b]
    seg = LineString([start, end])
    return [b for b in bases if seg.intersects(b.poly)]


def within(area: shapely.Geometry, dist: float, bases: list[Base]) -> list[Base]:
    """The bases within ``dist`` inches of ``area`` (CORE.CONV.DISTANCE)."""
    return [b for b in bases if geo.distance(area, b.poly) <= dist + geo.EPS]
