"""Game-data files: the one-line :class:`ConfigError`, the shipped data folder and where a faction, army list or
scenario file lies in it, reading YAML, turning pydantic errors into one line, and the cached loading of a file of
``configs/`` by its id.

Every reader raises :class:`ConfigError`, whose message is one line of the form
``<file>: <field path>: <what is wrong>``.
"""

from __future__ import annotations

import hashlib
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError


def package_data_dir(package: str) -> Path:
    """The folder of an installed ``battleline`` package, for the data files shipped in it.

    Read through :func:`importlib.resources.files`, so the shipped data is found from any
    working folder, in a wheel install as in an editable one.

    Raises:
        RuntimeError: the package is not installed as plain files (a zip import).
    """
    root = files(package)
    if not isinstance(root, Path):  # pragma: no cover - battleline is never installed zipped
        raise RuntimeError(f"{package}: installed as {type(root).__name__}, not as files; reinstall with pip")
    return root


CONFIG_DIR: Path = package_data_dir("battleline.configs")
"""The shipped data, ``battleline.configs`` (the repository's ``configs/``: factions/, armies/, scenarios/, ...)."""

REPO_ROOT: Path = CONFIG_DIR.parent
"""Where shown paths are relative to: the folder that holds ``configs/`` (the repository, or the installed package)."""


class ConfigError(ValueError):
    """A bad configuration file. ``str()`` is one line: ``<file>: <field path>: <problem>``.

    ``ConfigError("x.yaml: file not found")`` also works: ``file`` and ``where`` are optional.
    """

    def __init__(self, problem: str, *, file: str | None = None, where: str | None = None) -> None:
        self.file, self.where, self.problem = file, where, problem
        parts = [p for p in (file, where, problem) if p]
        super().__init__(" ".join(": ".join(parts).split()))


# ----------------------------------------------------------------------------- errors and files
def display_path(path: Path | str) -> str:
    """The path as shown in errors: relative to the repository when inside it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(p)


def loc_text(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a field path: ('units', 3, 'unit') -> 'units[3].unit'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and not re.search(r"[\[(]", part):  # pydantic's own tags: "function-after[...]"
            out += f".{part}" if out else part
    return out


_YAML_TEXT_EXPONENT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")
"""A number in exponent notation that YAML 1.1 (PyYAML) may read as a string, such as ``3e-4`` or ``1.0e4``."""


def _yaml_kind(value: Any) -> str:
    """What a YAML value is, in words: 'nothing (an empty value)', 'a list', "the string 'x'", 'the number 3'."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "a boolean (true/false)"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"[:120]
    return "a list" if isinstance(value, (list, tuple)) else f"a {type(value).__name__}"


def _error_text(err: dict[str, Any]) -> str:
    kind, msg = err["type"], err["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "finite_number":
        return "must be a finite number"
    if kind in ("model_type", "dict_type"):  # pydantic says "a valid dictionary or instance of SideConfig"
        return f"expected a mapping (field: value lines), got {_yaml_kind(err.get('input'))}"
    msg = re.sub(r"^(Value|Assertion) error, ", "", msg)
    value = err.get("input")
    if kind in ("int_type", "float_type", "bool_type") and isinstance(value, str):  # strict: no text for these
        hint = " (YAML reads an exponent as a number only with a '.' and a sign, e.g. 3.0e-4)" if (
            _YAML_TEXT_EXPONENT.fullmatch(value.strip())) else ""
        return f"{msg}, got {_yaml_kind(value)}"[:120] + hint
    if not kind.startswith(("value_error", "assertion_error")) and isinstance(value, (str, int, float, bool)):
        msg += f", got {value!r}"[:120]
    return msg


def from_validation_error(exc: ValidationError, file: str, data: Any = None) -> ConfigError:
    """The first pydantic error as a one-line :class:`ConfigError`.

    With the validated ``data``, an error inside a faction's unit type names its id beside its index
    (``units[8] (lord_marshal).t9a.attributes``), so a long faction file need not be counted through.
    """
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    where = loc_text(loc)
    unit_id = _unit_type_id(loc, data)
    if unit_id is not None:
        head = f"units[{loc[1]}]"
        where = f"{head} ({unit_id}){where[len(head):]}"
    return ConfigError(_error_text(err), file=file, where=where or None)


def _unit_type_id(loc: tuple[Any, ...], data: Any) -> str | None:
    """The ``id`` of the unit type an error location ``('units', i, ...)`` points into, if ``data`` has one there."""
    if len(loc) < 2 or loc[0] != "units" or not isinstance(loc[1], int) or not isinstance(data, dict):
        return None
    units = data.get("units")
    if not isinstance(units, list) or not 0 <= loc[1] < len(units) or not isinstance(units[loc[1]], dict):
        return None
    ident = units[loc[1]].get("id")
    return ident if isinstance(ident, str) and ident else None


class DuplicateKeyError(yaml.YAMLError):
    """A YAML mapping names the same key twice (``line`` counts from 1)."""

    def __init__(self, key: Any, line: int) -> None:
        super().__init__(f"line {line}: duplicate key {key!r}")
        self.key, self.line = key, line


def _unique_keys(loader: yaml.constructor.SafeConstructor, node: yaml.MappingNode, deep: bool = False) -> Any:
    """``construct_mapping`` that rejects a key given twice in one mapping (merged ``<<`` keys may be overridden)."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            if key in seen:
                raise DuplicateKeyError(key, key_node.start_mark.line + 1)
            seen.add(key)
        except TypeError:  # an unhashable key: SafeConstructor reports it
            pass
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)  # type: ignore[arg-type]


class _UniqueKeySafeLoader(yaml.SafeLoader):
    """The safe loader, duplicate mapping keys rejected."""

    construct_mapping = _unique_keys  # type: ignore[assignment]


_FAST_LOADER: type | None = (
    type("_UniqueKeyCSafeLoader", (yaml.CSafeLoader,), {"construct_mapping": _unique_keys})
    if hasattr(yaml, "CSafeLoader") else None
)
"""libyaml's parser with the same duplicate-key check (the constructor is Python either way)."""


YAML12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
"""The plain scalars read as booleans: YAML 1.2's ``true`` and ``false``. PyYAML follows YAML 1.1, where ``yes``,
``no``, ``on`` and ``off`` are booleans too; here they stay text, so a boolean field given one is an error
naming the field (``got the string 'yes'``) and a name such as ``No`` stays a name."""


def _yaml12_booleans(loader: type) -> type:
    """Give ``loader`` (a PyYAML loader class) YAML 1.2 booleans (:data:`YAML12_BOOL`); returns it."""
    bool_tag = "tag:yaml.org,2002:bool"
    loader.yaml_implicit_resolvers = {  # type: ignore[attr-defined]
        first: [(tag, rx) for tag, rx in rules if tag != bool_tag]
        for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(bool_tag, YAML12_BOOL, list("tTfF"))  # type: ignore[attr-defined]
    return loader


_yaml12_booleans(_UniqueKeySafeLoader)
if _FAST_LOADER is not None:
    _yaml12_booleans(_FAST_LOADER)


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` with duplicate keys rejected, parsed by libyaml where PyYAML has it
    (several times faster, same values).

    A document libyaml rejects is parsed again by the pure-Python loader, so
    errors read as they always have. Raises :class:`DuplicateKeyError` for a key
    given twice in one mapping.
    """
    if _FAST_LOADER is not None:
        try:
            return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - a CSafeLoader subclass
        except DuplicateKeyError:
            raise
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=_UniqueKeySafeLoader)  # noqa: S506 - a SafeLoader subclass


def read_file_text(path: Path | str, error: type[Exception] | None = None) -> str:
    """The UTF-8 text of ``path``; every project reader of a user-named file goes through here.

    Raises ``error`` (default :class:`ConfigError`) with one line ``FILE: is a
    directory`` / ``FILE: file not found`` / ``FILE: not UTF-8 text`` /
    ``FILE: cannot read (<reason>)``.
    """
    p = Path(path)
    shown = display_path(p)
    if p.is_dir():
        problem = "is a directory"
    elif not p.exists():
        problem = "file not found"
    else:
        try:
            return p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            problem = "not UTF-8 text"
        except OSError as exc:
            problem = f"cannot read ({exc.strerror or type(exc).__name__})"
    if error is None:
        raise ConfigError(problem, file=shown)
    raise error(f"{shown}: {problem}")


NESTED_TOO_DEEPLY = "nested too deeply to read (lists or mappings inside one another beyond Python's recursion limit)"
"""The problem a YAML or JSON file (a scenario, a replay) gets when its nesting exhausts the parser's recursion."""


def read_yaml(path: Path) -> dict[str, Any]:
    """The YAML mapping in ``path``. Raises ConfigError (see :func:`read_file_text`; invalid YAML,
    a duplicate key, not a mapping, nested too deeply for the parser: :data:`NESTED_TOO_DEEPLY`)."""
    shown = display_path(path)
    text = read_file_text(path)
    try:
        data = _load_yaml(text)
    except RecursionError:  # e.g. 1,000 nested lists: the parser recurses once a level
        raise ConfigError(NESTED_TOO_DEEPLY, file=shown) from None
    except DuplicateKeyError as exc:
        raise ConfigError(str(exc), file=shown) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"invalid YAML: {problem}{where}", file=shown) from None
    if data is None:  # an empty file, or one of comments only
        raise ConfigError("the file is empty or only comments (expected a mapping at the top level)", file=shown)
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping at the top level, got {type(data).__name__}", file=shown)
    return data


def parse(model: type[BaseModel], data: dict[str, Any], file: str) -> Any:
    """``model.model_validate(data)``, errors (a RecursionError too) converted to :class:`ConfigError` naming ``file``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, file, data) from None
    except RecursionError:  # values nested deeper than the checks can follow
        raise ConfigError(NESTED_TOO_DEEPLY, file=file) from None


_CACHE: dict[tuple[Path, int], Any] = {}


def _load(kind: str, ident: str, model: type[BaseModel]) -> Any:
    """Load and validate one config file, cached by path and modification time (treat as read-only).

    Raises:
        ConfigError: ``ident`` is not a plain file name without ``.yaml`` (a path such as
            ``../factions/men`` would read another folder's file), no shipped file has that id
            ("unknown army list 'x'; known: ..."), or the file is invalid.
    """
    if not ident or ident != Path(ident).name or ident.startswith(".") or "\\" in ident or ident.endswith(".yaml"):
        raise ConfigError(f"'{ident}' is not an id in configs/{kind} (a file name without '.yaml', not a path); "
                          f"known: {', '.join(_ids(kind))}")
    path = CONFIG_DIR / kind / f"{ident}.yaml"
    if not path.exists():  # an id no shipped file has: say so, not "configs/<kind>/<id>.yaml: file not found"
        raise ConfigError(f"unknown {_KIND_NOUNS.get(kind, kind)} '{ident}'; known: {', '.join(_ids(kind))}")
    try:
        key = (path, path.stat().st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    shown = display_path(path)
    obj = parse(model, read_yaml(path), shown)
    _check_id(obj.id, ident, shown)
    if key is not None:
        _CACHE[key] = obj
    return obj


_KIND_NOUNS = {"factions": "faction", "armies": "army list", "scenarios": "scenario"}
"""What an id of each folder of ``configs/`` names, for "unknown army list 'x'" errors."""


def _check_id(found: str, ident: str, shown: str) -> None:
    """Raise ConfigError when a file looked up by its id ``ident`` says another ``id`` (``shown``: its path)."""
    if found != ident:
        raise ConfigError(f"id '{found}' does not match the file name '{ident}'", file=shown, where="id")


def _ids(kind: str) -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / kind).glob("*.yaml"))



def army_path(army_id: str) -> Path:
    """Path of the army list file ``configs/armies/<army_id>.yaml``."""
    return CONFIG_DIR / "armies" / f"{army_id}.yaml"


def list_factions() -> list[str]:
    """Ids of the factions in ``configs/factions``, sorted."""
    return _ids("factions")


def list_armies(faction: str | None = None) -> list[str]:
    """Ids of the army lists in ``configs/armies``, sorted; only ``faction``'s when given."""
    ids = _ids("armies")
    if faction is None:
        return ids
    return [i for i in ids if read_yaml(army_path(i)).get("faction") == faction]


def list_scenarios() -> list[str]:
    """Ids of the scenarios in ``configs/scenarios``, sorted."""
    return _ids("scenarios")


def scenario_path(source: str | Path) -> Path:
    """The file of a scenario given as a name in ``configs/scenarios`` or a YAML path."""
    path = Path(source)
    if not path.suffix and not path.exists():
        path = CONFIG_DIR / "scenarios" / f"{source}.yaml"
    return path


def scenario_file(source: str | Path | dict[str, Any]) -> str:
    """The scenario's file as errors show it (``<dict>`` for a dict)."""
    return "<dict>" if isinstance(source, dict) else display_path(scenario_path(source))


def _config_stamp(path: Path) -> tuple:
    """What a loaded scenario depends on: its file (resolved path and a digest of its bytes) and the shipped
    configs (factions, army lists) as (name, mtime_ns, size) triples; a changed, added or removed file changes it."""
    files = sorted(CONFIG_DIR.rglob("*.yaml"))
    own = path.resolve()
    return (str(own), hashlib.sha256(own.read_bytes()).hexdigest(),
            *((str(f), st.st_mtime_ns, st.st_size) for f in files for st in (f.stat(),)))
