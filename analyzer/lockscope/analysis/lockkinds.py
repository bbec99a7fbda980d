"""The recorder's lock kinds (``locks[].kind``) that are locks of one inode."""

from __future__ import annotations

INODE_LOCK_KINDS = ("i_rwsem", "xfs_ilock", "invalidate_lock", "i_data_sem")
