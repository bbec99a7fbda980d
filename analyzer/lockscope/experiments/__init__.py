"""The published ext4-vs-XFS experiments, rerun through the sweep on this kernel and
written up as tables in docs/experiments.md (``lockscope experiments``)."""
