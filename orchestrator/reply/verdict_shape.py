"""The verdict shape of a verification reply (see :func:`.parse.parse_verdict`)."""

from __future__ import annotations

import re
from typing import Any

from orchestrator.reply.fields import kind_of
from orchestrator.reply.schemas import VERDICTS
from orchestrator.reply.top import read_top

MAX_REASON_CHARS = 2000


def normalise_verdict(value: Any) -> tuple[tuple[str, str] | None, list[str], str | None]:
    """((verdict, reason) or None, item errors, the fatal problem or None) for a loaded reply
    ``value``; the verdict is one of :data:`.schemas.VERDICTS` and the reason is cut
    to :data:`MAX_REASON_CHARS` (noted). Never raises."""
    top = read_top(value, "verdict", str, "a string")
    obj, raw, errors = top.obj, top.value, top.errors
    if top.problem is not None:
        return None, errors, top.problem
    verdict = re.sub(r"[\s\-]+", "_", raw.strip().lower())
    if verdict not in VERDICTS:
        return None, errors, f"verdict {raw!r} is not one of {list(VERDICTS)}"
    reason = obj.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        errors.append(f"reason missing or not text ({kind_of(reason)}); recorded as ''")
        return (verdict, ""), errors, None
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        errors.append(f"reason has {len(reason)} characters; cut to {MAX_REASON_CHARS}")
        reason = reason[:MAX_REASON_CHARS]
    return (verdict, reason), errors, None
