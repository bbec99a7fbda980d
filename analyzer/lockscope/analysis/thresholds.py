"""The shares the verdicts rest on, each defined once (docs/results-schema.md and
docs/sweep.md quote them)."""

# A cause is named only when it holds at least this share of the loss: of the lost
# thread time (attach), of the lost efficiency (a sweep's lock, device, CPU and io-wq
# findings).
EXPLAINS = 0.35
# An attach's top loss class holding this share of the lost time is named with high
# confidence.
STRONG = 0.6
