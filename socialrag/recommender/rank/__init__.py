"""The channel's learnt ranking: how the channel engaged with each paper and which signals are worth saying
(``engagement``), the features of a candidate (``features``), the fit and its description (``calibrate``),
training pairs from the channel's history (``history``, ``training``), the window candidates come from
(``window``), the judge that keeps a fit only when it beats the default blend (``guard``), the refit that
runs them (``refit``) and replays of a history against plain baselines (``evaluate``). Imports ``retrieve``
only."""
