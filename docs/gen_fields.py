"""Table rows for docs/gen_reference.py: a pydantic model's fields (and every model nested in it) with
their type, default, bounds and description, as the spec's and a serving profile's reference pages
show them."""

from __future__ import annotations

import types
import typing


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _type_name(annotation: object) -> str:
    """A field's type in the words a YAML writer needs (`int`, `list[str]`, `Candidate`, `a | b`)."""
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{value}`" for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in typing.get_args(annotation) if arg is not type(None))
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin is not None:
        args = ", ".join(_type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__name__
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def _models_in(annotation: object) -> list[type]:
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _bounds(field) -> str:
    words = []
    for item in field.metadata:
        for name, sign in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤"), ("min_length", "length ≥")):
            value = getattr(item, name, None)
            if value is not None:
                words.append(f"{sign} {value}")
    return ", ".join(words)


def _default(field) -> str:
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    if field.is_required():
        return "**required**"
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "—"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "its defaults"
    if value is None:
        return "not set"
    if isinstance(value, str):
        return f"`{value}`"
    return f"`{value!r}`".replace("|", "\\|")


def fields_rows(root: type) -> list[str]:
    """One table row per field of a pydantic model and of every model nested in it, depth first."""
    rows: list[str] = []
    seen: set[type] = set()

    def walk(model: type, prefix: str) -> None:
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            key = field.alias or name
            path = f"{prefix}{key}"
            nested = [m for m in _models_in(field.annotation) if m not in seen]
            list_suffix = "[]" if typing.get_origin(field.annotation) is list else ""
            description = (field.description or "").strip()
            rows.append(
                f"| `{path}{list_suffix}` | {_type_name(field.annotation)} | {_default(field)} | "
                f"{cell(_bounds(field))} | {cell(description)} |"
            )
            for sub in nested:
                seen.add(sub)
                walk(sub, f"{path}{list_suffix}.")
                seen.discard(sub)

    walk(root, "")
    return rows
