"""OpenTelemetry spans for a finished run, following the GenAI semantic conventions.

Needs the ``otel`` extra (``pip install -e '.[otel]'``). Only the report package's face
imports this module, on first use of :func:`export_run`, and :func:`orchestrator.api.run_task`
asks for it only when ``LOGIC_GRAPH_OTEL`` is set, so a run without the extra, or without the
variable, imports no OpenTelemetry module.

The spans are built after the run from its trace (every event carries a monotonic time) and its
report (tokens, cost, model per call), so the loop itself carries no tracing code:

- ``invoke_agent logic-graph``: the run (``gen_ai.operation.name`` ``invoke_agent``), with the
  outcome, calls and cost;
- a span per stage, child of the run: ``fan_out``, ``merge`` (ingest and merge),
  ``checks`` (each assessment), ``verification`` (each round), and for a corpus run
  ``query_rewrite``;
- ``chat <model>`` per model call (``gen_ai.operation.name`` ``chat``), child of its stage, timed
  by its latency: model, tokens (``gen_ai.usage.*``), finish reason, ``error.type`` on failure,
  and the project's own ``logic_graph.*`` attributes (cost in USD, role, subject, attempts).

Prompts and replies are not recorded (the conventions make content opt-in).
``LOGIC_GRAPH_OTEL=otlp`` sends them with the OTLP/HTTP exporter (configured by the standard
``OTEL_EXPORTER_OTLP_*`` variables); any other value is a file that gets one JSON span per
line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, set_span_in_context

SERVICE = "logic-graph"
Event = Mapping[str, Any]


def export_run(report: Mapping[str, Any], events: Sequence[Event], target: str) -> None:
    """Send the run's spans to ``target`` (``otlp`` or a file path) and flush them."""
    with contextlib.ExitStack() as stack:
        exporter: SpanExporter
        if target == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()
        else:
            handle = stack.enter_context(Path(target).open("a", encoding="utf-8"))
            exporter = ConsoleSpanExporter(
                out=handle, formatter=lambda span: span.to_json(indent=None) + "\n"
            )
        provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        try:
            emit_run(report, events, provider.get_tracer("logic-graph.orchestrator"))
        finally:
            provider.shutdown()


def emit_run(report: Mapping[str, Any], events: Sequence[Event], tracer: Tracer) -> None:
    """Record the run described by ``report`` and its trace ``events`` with ``tracer``."""
    if not events:
        return
    events = with_rewrite_call(events, report["calls"])
    zero = _epoch_ns(report["timing"]["started_at"]) - _ns(events[0]["t_s"])
    totals = report["totals"]
    run = tracer.start_span(
        f"invoke_agent {SERVICE}",
        kind=SpanKind.INTERNAL,
        start_time=zero + _ns(events[0]["t_s"]),
        attributes=_clean(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": SERVICE,
                "gen_ai.request.model": report["model"],
                "logic_graph.refused": report["refused"],
                "logic_graph.refusal_reason": report["refusal_reason"],
                "logic_graph.stop_reason": report["stop_reason"],
                "logic_graph.calls": totals["calls"],
                "logic_graph.cost_usd": totals["cost_usd"],
                "gen_ai.usage.input_tokens": totals["prompt_tokens"],
                "gen_ai.usage.output_tokens": totals["completion_tokens"],
            }
        ),
    )
    records = _records_by_key(report["calls"])
    for name, start, end, attributes in stages(events):
        stage = tracer.start_span(
            name,
            context=set_span_in_context(run),
            start_time=zero + _ns(start),
            attributes={"logic_graph.stage": name, **attributes},
        )
        for event in _calls_within(events, name, attributes, start, end):
            _call_span(tracer, stage, event, records, zero)
        stage.end(end_time=zero + _ns(end))
    run.end(end_time=zero + _ns(events[-1]["t_s"]))


def stages(events: Sequence[Event]) -> list[tuple[str, float, float, dict[str, Any]]]:
    """``(name, start_s, end_s, attributes)`` of each stage, read from the trace's events.

    fan_out: from its event to its last call or run; merge (runs are ingested as they arrive):
    from the first run back to the ``merge`` event;
    checks: from the event before each ``assess`` to it; verification: from a ``round`` event
    to that round's last verdict or call; query_rewrite: the rewrite call."""
    out: list[tuple[str, float, float, dict[str, Any]]] = []
    fan_out: list[float] = []  # [start, last call or run, first run]: the open fan-out
    previous = float(events[0]["t_s"])
    verification: dict[int, list[float]] = {}
    for event in events:
        kind, at, step = event["event"], float(event["t_s"]), str(event.get("step", ""))
        if kind == "fan_out":
            fan_out = [at, at]
        elif fan_out and (kind == "run" or (kind == "call" and step == "fan_out")):
            fan_out[1] = at
            if kind == "run" and len(fan_out) == 2:
                fan_out.append(at)
        elif kind == "merge" and fan_out:
            # Runs are ingested as they arrive, so merging overlaps the fan-out's tail.
            out.append(("fan_out", fan_out[0], fan_out[1], {}))
            out.append(("merge", fan_out[-1], at, {}))
            fan_out = []
        elif kind == "assess":
            out.append(("checks", previous, at, {"logic_graph.round": event.get("round")}))
        elif kind == "round":
            verification[int(event["round"])] = [at, at]
        elif kind == "call" and step.startswith("round_") and int(step[6:]) in verification:
            verification[int(step[6:])][1] = at
        elif kind == "verdict" and event.get("round") in verification:
            verification[int(event["round"])][1] = at
        elif kind == "call" and step == "query_rewrite":
            out.append(("query_rewrite", at - float(event["latency_s"]), at, {}))
        previous = at
    if fan_out:  # no merge: every interrogation failed
        out.append(("fan_out", fan_out[0], fan_out[1], {}))
    out += [
        ("verification", start, end, {"logic_graph.round": number})
        for number, (start, end) in sorted(verification.items())
    ]
    return sorted(out, key=lambda stage: (stage[1], stage[2]))


def with_rewrite_call(events: Sequence[Event], calls: Sequence[Mapping[str, Any]]) -> list[Event]:
    """``events`` with the corpus query rewrite as a call event: the trace records it as
    ``query_rewrite`` (the queries), the report as a call (its latency)."""
    records = [c for c in calls if c["step"] == "query_rewrite"]
    out: list[Event] = []
    for event in events:
        out.append(event)
        if event["event"] == "query_rewrite" and records:
            record = records.pop(0)
            out.append({**_call_fields(record), "event": "call", "t_s": event["t_s"]})
    return out


def _call_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("step", "role", "subject", "vote", "ok", "latency_s", "attempts", "error")
    return {key: record.get(key) for key in keys}


def _calls_within(
    events: Sequence[Event], stage: str, attributes: Mapping[str, Any], start: float, end: float
) -> list[Event]:
    """The call events of one stage: its step, inside its time."""
    step = {"fan_out": "fan_out", "query_rewrite": "query_rewrite"}.get(stage)
    if stage == "verification":
        step = f"round_{attributes['logic_graph.round']}"
    return [
        e
        for e in events
        if e["event"] == "call" and e.get("step") == step and start <= float(e["t_s"]) <= end
    ]


CallKey = tuple[Any, Any, Any, Any]


def _key(item: Mapping[str, Any]) -> CallKey:
    return (item.get("step"), item.get("role"), item.get("subject"), item.get("vote"))


def _records_by_key(calls: Sequence[Mapping[str, Any]]) -> dict[CallKey, list[Mapping[str, Any]]]:
    """The report's call records by (step, role, subject, vote), in order: the trace records a
    call after the report does, and two threads may swap, so they are matched by what they
    were, not by position."""
    out: dict[CallKey, list[Mapping[str, Any]]] = {}
    for call in calls:
        out.setdefault(_key(call), []).append(call)
    return out


def _call_span(
    tracer: Tracer,
    stage: Span,
    event: Event,
    records: dict[CallKey, list[Mapping[str, Any]]],
    zero: int,
) -> None:
    waiting = records.get(_key(event), [])
    record: Mapping[str, Any] = waiting.pop(0) if waiting else {}
    model = record.get("model", "unknown")
    end = zero + _ns(event["t_s"])
    span = tracer.start_span(
        f"chat {model}",
        context=set_span_in_context(stage),
        kind=SpanKind.CLIENT,
        start_time=end - _ns(event["latency_s"]),
        attributes=_clean(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
                "gen_ai.usage.input_tokens": record.get("prompt_tokens"),
                "gen_ai.usage.output_tokens": record.get("completion_tokens"),
                "gen_ai.response.finish_reasons": (
                    [record["finish_reason"]] if record.get("finish_reason") else None
                ),
                "error.type": None if event.get("ok", True) else "call_failed",
                "logic_graph.cost_usd": record.get("cost_usd"),
                "logic_graph.call.role": event.get("role"),
                "logic_graph.call.subject": event.get("subject"),
                "logic_graph.call.attempts": event.get("attempts"),
                "logic_graph.parse_outcome": record.get("parse_outcome"),
            }
        ),
    )
    if not event.get("ok", True):
        span.set_status(Status(StatusCode.ERROR, str(event.get("error") or "call failed")))
    span.end(end_time=end)


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Without the unknowns: OpenTelemetry attributes cannot be null."""
    return {key: value for key, value in attributes.items() if value is not None}


def _ns(seconds: Any) -> int:
    return round(float(seconds) * 1e9)


def _epoch_ns(iso: str) -> int:
    return round(datetime.fromisoformat(iso).timestamp() * 1e9)
