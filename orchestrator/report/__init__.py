"""What a run tells people and programs: report.json, report.md, report.html, spans, progress.

- :mod:`.build`: a finished loop turned into report.json and report.md;
- :mod:`.markdown`, :mod:`.html`: the two renderings for people;
- :mod:`.otel`: OpenTelemetry spans of a finished run;
- :mod:`.progress`: live progress on stderr while a run works;
- :mod:`.outdir`: one run per output folder.
"""
