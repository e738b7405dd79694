"""The control loop: a driver over named stages, its rules, and the calls it makes.

- :mod:`.driver`: fan out, merge, assess, re-interrogate, stop, decide;
- :mod:`.stages`: each stage with typed input and output;
- :mod:`.policy`: the loop's rules as pure functions; :mod:`.budget`: the call cap;
- :mod:`.calls`: the one place a model call is made and recorded; :mod:`.trace`: the trace;
- :mod:`.context_window`: evidence fitted into the model's window;
- :mod:`.corpus_mode`: retrieval rounds around the loop for corpus tasks.
"""
