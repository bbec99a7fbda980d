"""The shares the verdicts rest on, each defined once (docs/results-schema.md and
docs/sweep.md quote them by name; tests/unit/analysis/test_thresholds_quoted.py checks
the figures they quote)."""

# A cause is named only when it holds at least this share of the loss: of the lost
# thread time (attach), of the lost efficiency (a sweep's lock, device, CPU and io-wq
# findings; io-wq's share of request time too), of the growth of a server's time per
# transaction (a --preset sweep).
EXPLAINS = 0.35
# An attach's top loss class holding this share of the lost time is named with high
# confidence.
STRONG = 0.6
