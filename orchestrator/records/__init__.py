"""The orchestrator's records, each typed once.

- :mod:`.task`: a run's inputs (the task and its settings);
- :mod:`.loop`: what the loop's stages produce (calls, runs, merges, votes, hops);
- :mod:`.report`: report.json's sections;
- :mod:`.reasons`: why a run stopped and why it gave no answer.
"""
