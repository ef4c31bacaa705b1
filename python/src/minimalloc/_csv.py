"""The reference CSV format, as the minimalloc command reads and writes it.

Columns ``id,lower,upper,size[,alignment][,hint][,gaps][,colocation]
[,separation][,penalty][,pools][,offset]`` in any order, with the aliases
``start``/``begin`` (lower), ``buffer``/``buffer_id`` (id) and ``end`` (an
inclusive upper: upper = end + 1). A hint of -1 means none (the reference
format's way). Gaps are space-separated ``lower-upper`` or
``lower-upper@window_lower:window_upper``. Rows with the same
``colocation`` label share one offset; a ``separation`` cell lists
space-separated labels, and rows with a label in common may not share a
byte; a ``penalty`` cell lists space-separated ``label:cost`` tokens,
and rows with a label in common may share bytes at that cost (a reuse
penalty, see :meth:`Problem.penalize`); a ``pools`` cell names, preferred
first, the pools (given to
:func:`read_csv`) a buffer may go to. Other columns are ignored (the
command keeps them in its output; a :class:`Problem` has no place for
them). The grammar is the command's: tests read the same files with both.
"""

from __future__ import annotations

import csv
import io
import os
from typing import Dict, List, Optional, Sequence, TextIO, Tuple, Union

from ._api import InvalidInputError, Problem, Result

PathOrFile = Union[str, "os.PathLike[str]", TextIO]

_ALIASES = {
    "id": "id",
    "buffer": "id",
    "buffer_id": "id",
    "lower": "lower",
    "start": "lower",
    "begin": "lower",
    "upper": "upper",
    "end": "end",
    "size": "size",
    "alignment": "alignment",
    "hint": "hint",
    "gaps": "gaps",
    "offset": "offset",
    "colocation": "colocation",
    "separation": "separation",
    "penalty": "penalty",
    "pools": "pools",
}


def _open_text(source: PathOrFile) -> TextIO:
    if isinstance(source, (str, os.PathLike)):
        return open(source, newline="", encoding="utf-8")
    return source


PoolSpec = Union[Tuple[str, int], Tuple[str, int, int], Tuple[str, int, int, int]]


def read_csv(
    source: PathOrFile,
    capacity: Optional[int] = None,
    *,
    lifetime: str = "half-open",
    pools: Sequence[PoolSpec] = (),
) -> Problem:
    """Reads a problem from a CSV file (a path or an open text file).

    ``pools`` are ``(name, capacity[, base[, alignment]])``, added in that
    order; a ``pools`` column names them. Errors raise
    :class:`InvalidInputError` naming the line, the column and, for the
    library's checks, the buffer and why.
    """
    name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", "<csv>")
    stream = _open_text(source)
    try:
        rows = list(csv.reader(stream))
    finally:
        if stream is not source:
            stream.close()
    if not rows:
        raise InvalidInputError(f"{name}: empty file: expected a header line")
    header = [h.strip().lower() for h in rows[0]]
    columns: Dict[str, int] = {}
    for position, heading in enumerate(header):
        field = _ALIASES.get(heading)
        if field is None:
            continue  # kept by the command, ignored here
        if field in columns or (field in ("upper", "end") and ({"upper", "end"} & columns.keys())):
            raise InvalidInputError(f"{name}: line 1: column {heading!r} given twice")
        columns[field] = position
    for needed in ("lower", "size"):
        if needed not in columns:
            raise InvalidInputError(f"{name}: line 1: no {needed} column")
    if "upper" not in columns and "end" not in columns:
        raise InvalidInputError(f"{name}: line 1: no upper (or end) column")
    problem = Problem(capacity, lifetime=lifetime)
    # Link labels in the order they first appear: (label, rows, lines).
    links: Dict[str, Dict[str, Tuple[List[int], List[int]]]] = {"colocation": {}, "separation": {}}
    pool_cells: List[Tuple[int, int, str]] = []
    # Each penalty label: its cost, first line, and (buffer, line) per row.
    penalties: Dict[str, Tuple[int, int, List[Tuple[int, int]]]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InvalidInputError(f"{name}: line {line}: {len(row)} fields, the header has {len(header)}")

        def cell(field: str) -> str:
            return row[columns[field]].strip()

        def number(field: str, heading: Optional[str] = None) -> int:
            text = cell(field)
            try:
                return int(text)
            except ValueError:
                raise InvalidInputError(
                    f"{name}: line {line}, column {heading or field}: expected an integer, got {text!r}"
                ) from None

        lower = number("lower")
        if "upper" in columns:
            upper = number("upper")
        else:
            # `end` is inclusive: the problem's own convention if that is
            # inclusive too, one past it otherwise.
            upper = number("end") + (0 if lifetime == "inclusive" else 1)
        size = number("size")
        alignment = number("alignment") if "alignment" in columns and cell("alignment") else 1
        ident = cell("id") if "id" in columns else str(line - 2)
        try:
            index = problem.add(lower, upper, size, alignment, id=ident)
            if "gaps" in columns and cell("gaps"):
                for gap in cell("gaps").split():
                    span, _, window = gap.partition("@")
                    gl, _, gu = span.partition("-")
                    w = None
                    if window:
                        wl, _, wu = window.partition(":")
                        w = (int(wl), int(wu))
                    problem.add_gap(index, int(gl), int(gu), w)
            # The reference writes -1 for "no hint".
            if "hint" in columns and cell("hint") and number("hint") != -1:
                problem.hint(index, number("hint"))
            if "offset" in columns and cell("offset"):
                problem.fix(index, number("offset"))
        except InvalidInputError as e:
            raise InvalidInputError(f"{name}: line {line} (id \"{ident}\"): {e}") from None
        except ValueError:
            raise InvalidInputError(f"{name}: line {line}, column gaps: bad gap list {cell('gaps')!r}") from None
        for kind in ("colocation", "separation"):
            if kind in columns and cell(kind):
                labels = [cell(kind)] if kind == "colocation" else cell(kind).split()
                for label in labels:
                    members, lines = links[kind].setdefault(label, ([], []))
                    members.append(index)
                    lines.append(line)
        if "penalty" in columns and cell("penalty"):
            for token in cell("penalty").split():
                label, colon, text = token.partition(":")
                if not colon:
                    raise InvalidInputError(
                        f"{name}: line {line}, column penalty: expected label:cost, got {token!r}"
                    )
                try:
                    cost = int(text)
                except ValueError:
                    raise InvalidInputError(
                        f"{name}: line {line}, column penalty: expected an integer, got {text!r}"
                    ) from None
                first = penalties.setdefault(label, (cost, line, []))
                if first[0] != cost:
                    raise InvalidInputError(
                        f"{name}: line {line}, column penalty: penalty {label!r} costs {cost} "
                        f"here but {first[0]} on line {first[1]}"
                    )
                first[2].append((index, line))
        if "pools" in columns and cell("pools"):
            pool_cells.append((index, line, cell("pools")))
    for kind in ("colocation", "separation"):
        for members, lines in links[kind].values():
            try:
                (problem.colocate if kind == "colocation" else problem.separate)(members)
            except InvalidInputError as e:
                raise InvalidInputError(f"{name}: line {lines[-1]}, column {kind}: {e}") from None
    for label, (cost, first_line, labelled) in penalties.items():
        if len(labelled) < 2:
            raise InvalidInputError(
                f"{name}: line {first_line}, column penalty: penalty {label!r} names one row; "
                "it needs two or more"
            )
        for i, (a, _) in enumerate(labelled):
            for b, at in labelled[i + 1 :]:
                try:
                    problem.penalize(a, b, cost)
                except InvalidInputError as e:
                    raise InvalidInputError(f"{name}: line {at}, column penalty: {e}") from None
    for spec in pools:
        try:
            pool_name, pool_capacity, *rest = spec
            problem.add_pool(
                pool_name,
                pool_capacity,
                base=rest[0] if rest else 0,
                alignment=rest[1] if len(rest) > 1 else 1,
            )
        except (InvalidInputError, ValueError, TypeError) as e:
            raise InvalidInputError(f"pool {spec!r}: {e}") from None
    by_name = {pool_name: i for i, pool_name in enumerate(problem.pool_names)}
    for index, line, text in pool_cells:
        listed = []
        for pool_name in text.split():
            if pool_name not in by_name:
                known = ", ".join(problem.pool_names) or "none given"
                raise InvalidInputError(
                    f"{name}: line {line}, column pools: no pool named {pool_name!r} (pools: {known})"
                )
            listed.append(by_name[pool_name])
        problem.set_pools(index, listed)
    return problem


def write_csv(destination: PathOrFile, problem: Problem, result: Optional[Result] = None) -> None:
    """Writes the problem as CSV, with an ``offset`` column from ``result``
    (its offsets, base included) or from the fixed offsets."""
    lower, upper, size, alignment = problem.columns()
    n = len(problem)
    if result is not None and (result.offsets is None or len(result.offsets) != n):
        raise InvalidInputError("the result has no placement for this problem")
    header = ["id", "lower", "upper", "size"]
    with_alignment = bool((alignment != 1).any())
    with_gaps = bool(problem._gaps)
    with_hints = bool(problem._hints)
    colocations, separations = problem.links()
    colocation_of: Dict[int, str] = {}
    for g, members in enumerate(colocations):
        for m in members:
            colocation_of[m] = f"c{g}"
    separations_of: Dict[int, List[str]] = {}
    for g, members in enumerate(separations):
        for m in members:
            separations_of.setdefault(m, []).append(f"s{g}")
    if with_alignment:
        header.append("alignment")
    if with_hints:
        header.append("hint")
    if with_gaps:
        header.append("gaps")
    if colocations:
        header.append("colocation")
    if separations:
        header.append("separation")
    penalty_of: Dict[int, List[str]] = {}
    for k, (a, b, cost) in enumerate(problem.penalties()):
        for m in (a, b):
            penalty_of.setdefault(m, []).append(f"p{k}:{cost}")
    if penalty_of:
        header.append("penalty")
    with_offsets = result is not None or bool(problem._fixed)
    if with_offsets:
        header.append("offset")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for i in range(n):
        row: List[object] = [problem.ids[i], int(lower[i]), int(upper[i]), int(size[i])]
        if with_alignment:
            row.append(int(alignment[i]))
        if with_hints:
            row.append(problem._hints.get(i, -1))
        if with_gaps:
            row.append(
                " ".join(
                    f"{gl}-{gu}" + ("" if w is None else f"@{w[0]}:{w[1]}")
                    for gl, gu, w in problem._gaps.get(i, [])
                )
            )
        if colocations:
            row.append(colocation_of.get(i, ""))
        if separations:
            row.append(" ".join(separations_of.get(i, [])))
        if penalty_of:
            row.append(" ".join(penalty_of.get(i, [])))
        if with_offsets:
            if result is not None:
                row.append(int(result.offsets[i]))  # type: ignore[index]
            else:
                row.append(problem._fixed.get(i, ""))
        writer.writerow(row)
    text = out.getvalue()
    if isinstance(destination, (str, os.PathLike)):
        with open(destination, "w", newline="", encoding="utf-8") as f:
            f.write(text)
    else:
        destination.write(text)
