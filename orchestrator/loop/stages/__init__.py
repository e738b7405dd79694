"""The loop's stages, each a small unit with typed input and output.

=====================  ===========================================  ==========================
stage                  function                                     module
=====================  ===========================================  ==========================
fan-out                :func:`fan_out` (interrogations, run order)  :mod:`.fan_out`
anchoring and ingest   :func:`ingest_run`                           :mod:`.merge`
merging                :func:`merge_pass`                           :mod:`.merge`
attack settling        :func:`settle_attacks`                       :mod:`.merge`
assessment             :func:`assess_graph`                         :mod:`.decision`
verification rounds    :func:`verification_round`                   :mod:`.verify`
decision               :func:`decision_details` (after ``decide``)  :mod:`.decision`
=====================  ===========================================  ==========================

Every stage takes the run's :class:`~.context.LoopContext` (its inputs, the call machinery, the
graph in the store, the trace) and returns a typed record; a run's record is written only by
:mod:`.runs`; the rules they apply are the pure
functions of :mod:`orchestrator.loop.policy`. The driver that runs them is
:func:`orchestrator.loop.driver.run_loop`; retrieval rounds around it live in
:mod:`orchestrator.loop.corpus_mode`.
"""
