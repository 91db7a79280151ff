"""The siege module (RULESET.md §5, SIEGE.*): castle, damage, equipment and assault.

* :mod:`env.rules.siege.castle` — castle elements (walls, towers, gates, the
  citadel) as JSON-able game objects with shapely geometry
  (SIEGE.CASTLE.*, SIEGE.SCEN.CASTLE);
* :mod:`env.rules.siege.damage` — the wall, tower and gate damage tables and
  how each kind of attack damages an element (SIEGE.DMG.*);
* :mod:`env.rules.siege.equipment` — siege equipment, costs and limits
  (SIEGE.EQUIP.*);
* :mod:`env.rules.siege.assault` — assaulting walls and towers
  (SIEGE.ASSAULT.*, SIEGE.CC.*, SIEGE.CAPTURE.*, SIEGE.BREAK.*, SIEGE.REACT.WALL).

A battle without the ``siege`` module has an empty ``BattleState.castle`` and
none of these rules fire.
"""
